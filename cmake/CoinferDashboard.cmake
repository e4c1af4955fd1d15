# coinfer_dashboard_source(VAR): the generated C++ source holding the dashboard page (GET
# /dashboard, src/protocol/dashboard/index.html) as a string, rebuilt when the page changes.
# COINFER_ROOT is the source tree's root. Used by the main build and the fuzz build.
function(coinfer_dashboard_source var)
  set(page ${COINFER_ROOT}/src/protocol/dashboard/index.html)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/dashboard_page.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${page} -DOUTPUT=${out} -DSYMBOL=kDashboardHtml
            -P ${COINFER_ROOT}/cmake/EmbedText.cmake
    DEPENDS ${page} ${COINFER_ROOT}/cmake/EmbedText.cmake
    COMMENT "Embedding the dashboard page")
  set_source_files_properties(${out} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  set(${var} ${out} PARENT_SCOPE)
endfunction()
