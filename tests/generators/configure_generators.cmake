# Driven by CTest (see CMakeLists.txt): configure and generate the project into scratch
# directories with the Unix Makefiles generator, COINFER_WITH_CUDA on and off.
foreach(cuda ON OFF)
  set(dir ${WORK_DIR}/makefiles-cuda-${cuda})
  file(REMOVE_RECURSE ${dir})
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${dir} -G "Unix Makefiles"
            -DCOINFER_WITH_CUDA=${cuda}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "Unix Makefiles, COINFER_WITH_CUDA=${cuda}: configure failed (${rc})\n${err}")
  endif()
  if(NOT EXISTS ${dir}/Makefile)
    message(FATAL_ERROR "Unix Makefiles, COINFER_WITH_CUDA=${cuda}: no Makefile generated")
  endif()
  message(STATUS "Unix Makefiles, COINFER_WITH_CUDA=${cuda}: configured")
  file(REMOVE_RECURSE ${dir})
endforeach()
