# GzipMan.cmake (cmake -P): compress IN into OUT with `gzip -9n` (no name or
# time stamp: reproducible packages). With VERSION set, IN is a man page whose
# .TH line names "logsink <version>" and <version> becomes VERSION
# (project(VERSION)); a page without that field fails the build, so it cannot
# silently keep another version.
file(READ ${IN} text)
if(DEFINED VERSION)
  string(REGEX MATCH "\n\\.TH [^\n]*\"logsink [^\"]*\"" th "\n${text}")
  if(NOT th)
    message(FATAL_ERROR "${IN}: the .TH line must name \"logsink <version>\"")
  endif()
  string(REGEX REPLACE "(\n\\.TH [^\n]*\")logsink [^\"]*\"" "\\1logsink ${VERSION}\""
         text "\n${text}")
  string(SUBSTRING "${text}" 1 -1 text)
endif()
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
file(WRITE ${OUT}.src "${text}")
execute_process(COMMAND ${GZIP} -9n -c ${OUT}.src OUTPUT_FILE ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${OUT}: ${rc}")
endif()
file(REMOVE ${OUT}.src)
