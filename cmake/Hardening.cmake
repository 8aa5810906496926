# Hardening.cmake: Debian's hardening build flags for every target, the set
# `DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags` gives on Debian 12
# (https://wiki.debian.org/Hardening):
#   compile  -fstack-protector-strong -Wformat -Werror=format-security
#            -D_FORTIFY_SOURCE=2 (CPPFLAGS)
#   link     -Wl,-z,relro -Wl,-z,now (full RELRO: the GOT read-only after
#            start-up, BIND_NOW)
# PIE is the default of Debian's gcc and clang (CMAKE_POSITION_INDEPENDENT_CODE
# is ON as well). On by default, so the plain Release build that
# scripts/check_checkout.sh packages (and a user's) is hardened without a
# packager's environment; -DLOGSINK_HARDENING=OFF leaves the flags alone.
#
# A packager's own flags win: whatever CFLAGS/CXXFLAGS/LDFLAGS (debhelper
# folds CPPFLAGS into CFLAGS and CXXFLAGS for CMake) already say about
# _FORTIFY_SOURCE, the stack protector, relro or now is not added again (a
# second -D_FORTIFY_SOURCE with another level would be a redefinition
# warning, an error under LOGSINK_WERROR).
#
# _FORTIFY_SOURCE only where it works and does not mislead:
#   - in the optimised configurations (Release, RelWithDebInfo, MinSizeRel):
#     glibc's checks need -O, and without it glibc warns ("_FORTIFY_SOURCE
#     requires compiling with optimization"), which -Werror would turn into
#     a failed Debug build;
#   - not with sanitizers (-fsanitize= in CMAKE_C_FLAGS/CMAKE_CXX_FLAGS: the
#     asan and tsan presets; LOGSINK_FUZZ): the __*_chk functions bypass
#     ASan's interceptors, a known bad mix.
option(LOGSINK_HARDENING
  "Build with Debian's hardening flags (stack protector, _FORTIFY_SOURCE=2, format security, RELRO, BIND_NOW)" ON)

if(LOGSINK_HARDENING)
  include(CheckCCompilerFlag)
  include(CheckLinkerFlag)
  set(_hard_cflags "${CMAKE_C_FLAGS} ${CMAKE_CXX_FLAGS}")
  set(_hard_ldflags "${CMAKE_EXE_LINKER_FLAGS} ${CMAKE_SHARED_LINKER_FLAGS}")
  set(_hard_done)

  if(NOT _hard_cflags MATCHES "-f(no-)?stack-protector")
    check_c_compiler_flag(-fstack-protector-strong LOGSINK_HAVE_STACK_PROTECTOR_STRONG)
    if(LOGSINK_HAVE_STACK_PROTECTOR_STRONG)
      add_compile_options(-fstack-protector-strong)
      list(APPEND _hard_done stack-protector-strong)
    endif()
  endif()

  add_compile_options(-Wformat -Werror=format-security)
  list(APPEND _hard_done format-security)

  if(_hard_cflags MATCHES "_FORTIFY_SOURCE")
    set(_hard_fortify "as the given flags say")
  elseif(_hard_cflags MATCHES "-fsanitize=" OR LOGSINK_FUZZ)
    set(_hard_fortify "off (sanitizers)")
  else()
    add_compile_definitions($<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:_FORTIFY_SOURCE=2>)
    set(_hard_fortify "2 in Release, RelWithDebInfo, MinSizeRel")
  endif()

  set(_hard_given_relro "-z,? *(no)?relro")
  set(_hard_given_now "-z,? *(now|lazy)")
  foreach(z relro now)
    if(NOT _hard_ldflags MATCHES "${_hard_given_${z}}")
      check_linker_flag(C "LINKER:-z,${z}" LOGSINK_HAVE_LINK_Z_${z})
      if(LOGSINK_HAVE_LINK_Z_${z})
        add_link_options("LINKER:-z,${z}")
        list(APPEND _hard_done "-z ${z}")
      endif()
    endif()
  endforeach()

  list(JOIN _hard_done ", " _hard_done)
  message(STATUS "Hardening: ${_hard_done}; _FORTIFY_SOURCE ${_hard_fortify}")
endif()
