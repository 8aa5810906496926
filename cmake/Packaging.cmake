# Packaging.cmake: `cpack -G DEB` builds three Debian packages from the install
# components:
#   liblogsink0  (component lib): the shared library, named after its SONAME
#                 (liblogsink.so.0) as Debian policy 8.1 asks, with shlibs and
#                 an ldconfig trigger;
#   logsink      (component daemon): logsinkd, logctl, logsink_hello, units,
#                 sysusers/tmpfiles snippets, config, man pages;
#   logsink-dev  (component dev): header, static library, .so link,
#                 pkg-config and CMake package files, liblogsink(3);
#   logsink-forward (component forward): logsink-forward, its template unit,
#                 man page and example configuration (a package of its own:
#                 it links libnats, which logsinkd does not need);
#   python3-logsink (component python): the pure-Python client package in
#                 /usr/lib/python3/dist-packages (Architecture all, sources
#                 only, no bytecode).
# The units, /etc and ExecStart paths are fixed at configure time, so packages
# are only built from a tree configured with -DCMAKE_INSTALL_PREFIX=/usr (cpack
# refuses others, see logsink-cpack-check.cmake below). Debian-only files
# (copyright, changelog, lintian overrides) are EXCLUDE_FROM_ALL: cpack
# installs them, a plain `cmake --install` does not.
set(LOGSINK_DEB_REVISION 1)
set(LOGSINK_DEB_VERSION ${PROJECT_VERSION}-${LOGSINK_DEB_REVISION})
set(_deb ${PROJECT_SOURCE_DIR}/systemd/deb)

set(CPACK_PACKAGE_NAME logsink)
set(CPACK_PACKAGE_VENDOR "logsink maintainers")
set(CPACK_PACKAGE_CONTACT "logsink maintainers <maintainers@logsink.invalid>")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put that one line above
# every component's description; each package has its own synopsis below
# (first line; the following lines are the extended description).
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib daemon dev forward python)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${LOGSINK_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Binaries ship stripped (lintian: unstripped-binary-or-object); debug builds
# come from the build tree, not from the packages.
set(CPACK_STRIP_FILES ON)
# Only CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS exists (CPack has no per-component
# form of it): a shlibs file for every package holding a shared object, i.e.
# liblogsink0. ">=": a program built against 0.1.0 runs with any later 0.x.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# logsink_hello links liblogsink.so.0 from the package beside it: dpkg-shlibdeps
# finds it in the build tree and leaves the dependency to the Depends below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/client)

set(CPACK_DEBIAN_LIB_PACKAGE_NAME liblogsink0)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_SHLIBDEPS ON)
# The ldconfig trigger replaces CPack's postinst/postrm that call ldconfig
# (lintian: lacks-ldconfig-trigger); CPack writes those only when no postinst
# or postrm is given, so liblogsink0 brings its own, which do nothing else.
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA
    ${_deb}/liblogsink0/triggers ${_deb}/liblogsink0/postinst ${_deb}/liblogsink0/postrm)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_COMPONENT_LIB_DESCRIPTION "C client library of the logsink local log sink
Applications log printf-style messages with LS_LOG(); the library sends
them as compact binary records to logsinkd over a Unix socket and never
blocks the application for long.")

set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME logsink)
set(CPACK_DEBIAN_DAEMON_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "liblogsink0 (= ${LOGSINK_DEB_VERSION}), systemd")
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
    ${_deb}/postinst ${_deb}/prerm ${_deb}/postrm ${_deb}/conffiles)
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_COMPONENT_DAEMON_DESCRIPTION "local log sink daemon with a bounded, crash-safe ring file
logsinkd batches binary log records from local clients into 8 KiB blocks
inside one preallocated ring file of fixed size, crash-safe; logctl reads,
follows and verifies it. Runs as a socket-activated systemd service.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME logsink-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "liblogsink0 (= ${LOGSINK_DEB_VERSION})")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION "development files for liblogsink, the logsink client library
Header, static library, pkg-config and CMake package files, the
liblogsink(3) man page and the example program's source for liblogsink,
the C client library of the logsink local log sink.")

set(CPACK_DEBIAN_FORWARD_PACKAGE_NAME logsink-forward)
set(CPACK_DEBIAN_FORWARD_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FORWARD_PACKAGE_DEPENDS "logsink (= ${LOGSINK_DEB_VERSION})")
set(CPACK_COMPONENT_FORWARD_DESCRIPTION "ships the logsink ring to NATS JetStream or rsyslog (RELP)
logsink-forward follows the ring file of logsinkd and publishes every
record to a NATS JetStream stream (exactly once, deduplicated by cursor)
or to rsyslog over RELP (acknowledged, at least once), resuming from an
atomically written cursor after a restart.")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-logsink)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_COMPONENT_PYTHON_DESCRIPTION "Python client of the logsink local log sink
A pure-Python (standard library only) client of logsinkd: logsink.Client
logs printf-style records with typed arguments, and logsink.Handler sends
the records of the logging module, format and arguments apart, with the
drop-and-count policy of liblogsink.")

# Per package: machine-readable copyright, changelog.Debian.gz (gzip -9n, as
# the man pages), and lintian overrides where a package has any.
set(_changelog ${PROJECT_BINARY_DIR}/deb/changelog.Debian.gz)
add_custom_command(OUTPUT ${_changelog}
  COMMAND ${CMAKE_COMMAND} -DIN=${_deb}/changelog -DOUT=${_changelog} -DGZIP=${LOGSINK_GZIP}
          -P ${LOGSINK_MAN_SCRIPT}
  DEPENDS ${_deb}/changelog ${LOGSINK_MAN_SCRIPT}
  COMMENT "changelog.Debian.gz")
add_custom_target(logsink_deb_changelog ALL DEPENDS ${_changelog})
foreach(comp lib daemon dev forward python)
  string(TOUPPER ${comp} _c)
  set(_doc ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${_c}_PACKAGE_NAME})
  install(FILES ${_deb}/copyright ${_changelog} DESTINATION ${_doc}
          COMPONENT ${comp} EXCLUDE_FROM_ALL)
  set(_ovr ${_deb}/lintian/${CPACK_DEBIAN_${_c}_PACKAGE_NAME})
  if(EXISTS ${_ovr})
    install(FILES ${_ovr} DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
            COMPONENT ${comp} EXCLUDE_FROM_ALL)
  endif()
endforeach()

# The changelog's newest entry must be this version.
file(STRINGS ${_deb}/changelog _top LIMIT_COUNT 1)
if(NOT _top MATCHES "^logsink \\(${LOGSINK_DEB_VERSION}\\) ")
  message(FATAL_ERROR "systemd/deb/changelog: the first entry must be logsink (${LOGSINK_DEB_VERSION})")
endif()

# cpack reads this file first: a tree for another prefix would put the units
# and /etc files under it and run ExecStart from it, so stop with a hint.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/logsink-cpack-check.cmake)
file(WRITE ${CPACK_PROJECT_CONFIG_FILE}
  "# Generated by cmake/Packaging.cmake: refuse packages from a non-/usr tree.\n"
  "if(CPACK_GENERATOR STREQUAL \"DEB\" AND NOT \"${CMAKE_INSTALL_PREFIX}\" STREQUAL \"/usr\")\n"
  "  message(FATAL_ERROR \"logsink: this tree is configured with CMAKE_INSTALL_PREFIX=\"\n"
  "    \"${CMAKE_INSTALL_PREFIX}; the .deb needs -DCMAKE_INSTALL_PREFIX=/usr\")\n"
  "endif()\n")
include(CPack)
