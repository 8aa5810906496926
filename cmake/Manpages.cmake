# Manpages.cmake: logsink_install_man(<page> <component>) installs a man page
# the way Debian policy wants it: compressed with `gzip -9n` (no name or time
# stamp, so the package is reproducible), with the version field of its .TH
# line set from project(VERSION), so every page names the same release.
set(LOGSINK_MAN_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/GzipMan.cmake)
find_program(LOGSINK_GZIP gzip REQUIRED)
if(NOT TARGET logsink_man)
  add_custom_target(logsink_man ALL)
endif()

function(logsink_install_man page component)
  get_filename_component(_name ${page} NAME)
  string(REGEX MATCH "[0-9]+$" _section ${_name})
  set(_out ${PROJECT_BINARY_DIR}/man/man${_section}/${_name}.gz)
  add_custom_command(OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_SOURCE_DIR}/${page} -DOUT=${_out}
            -DVERSION=${PROJECT_VERSION} -DGZIP=${LOGSINK_GZIP} -P ${LOGSINK_MAN_SCRIPT}
    DEPENDS ${page} ${LOGSINK_MAN_SCRIPT}
    COMMENT "man page ${_name}.gz")
  string(MAKE_C_IDENTIFIER "logsink_man_${_name}" _tgt)
  add_custom_target(${_tgt} DEPENDS ${_out})
  add_dependencies(logsink_man ${_tgt})
  install(FILES ${_out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_section} COMPONENT ${component})
endfunction()
