# Packaging.cmake: `cpack -G DEB` builds two Debian packages from the install
# components: `logsink` (component daemon: logsinkd, logctl, liblogsink.so,
# units, config, man pages) and `logsink-dev` (component dev: header, static
# library, pkg-config and CMake package files, man3).
set(CPACK_PACKAGE_NAME logsink)
set(CPACK_PACKAGE_VENDOR "logsink maintainers")
set(CPACK_PACKAGE_CONTACT "logsink maintainers <maintainers@logsink.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "local log sink: bounded, crash-safe ring file of binary log records")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL daemon dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME logsink)
set(CPACK_DEBIAN_DAEMON_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/systemd/deb/postinst
    ${PROJECT_SOURCE_DIR}/systemd/deb/prerm
    ${PROJECT_SOURCE_DIR}/systemd/deb/postrm)
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME logsink-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "logsink (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DAEMON_DESCRIPTION "logsinkd daemon, logctl reader and the liblogsink shared library")
set(CPACK_COMPONENT_DEV_DESCRIPTION "liblogsink headers, static library, pkg-config and CMake files")
include(CPack)
