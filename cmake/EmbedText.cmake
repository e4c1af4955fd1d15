# cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=name -P EmbedText.cmake
# Writes a C++ source defining `extern const char coinfer::SYMBOL[]` with INPUT's text, so a
# page (the dashboard) is compiled into the library and served without files beside it.
file(READ "${INPUT}" text)
string(FIND "${text}" ")coinfer_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )coinfer_embed\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedText.cmake: edit that file instead.\n"
  "namespace coinfer {\n"
  "extern const char ${SYMBOL}[];\n"
  "const char ${SYMBOL}[] = R\"coinfer_embed(${text})coinfer_embed\";\n"
  "}  // namespace coinfer\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
