# libcordon.so, installation (binary, library, headers, pkg-config, CMake package) and the
# Debian package. Included at the end of the top-level CMakeLists.txt, after every module exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every library module goes into the shared library. The CLI and the MCP server are programs
# built on the library, not part of its API, so they stay out.
set(cordon_library_modules core net config policy plan linux limits zygote bwrap seatbelt exec session
  worktree report capi)
set(cordon_library_objects)
foreach(module ${cordon_library_modules})
  if(TARGET cordon_${module})
    # Static module libraries are compiled with POSITION_INDEPENDENT_CODE, so their objects can
    # be linked into a shared library as they are (no second compilation).
    list(APPEND cordon_library_objects $<TARGET_OBJECTS:cordon_${module}>)
  endif()
endforeach()

add_library(cordon_shared SHARED ${cordon_library_objects})
add_library(cordon::cordon ALIAS cordon_shared)
set_target_properties(cordon_shared PROPERTIES
  OUTPUT_NAME cordon
  EXPORT_NAME cordon
  VERSION ${PROJECT_VERSION}
  SOVERSION 0
  LINKER_LANGUAGE CXX)
target_include_directories(cordon_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# The objects' own dependencies (shared system libraries; nlohmann_json is header-only).
target_link_libraries(cordon_shared PRIVATE PkgConfig::RE2 PkgConfig::LDNS fmt::fmt)
if(CORDON_LINUX)
  target_link_libraries(cordon_shared PRIVATE PkgConfig::SECCOMP)
endif()
# A library with undefined symbols would only fail in the consumer's link: fail here instead.
# (GNU ld's spelling; Apple's linker reports undefined symbols by default.)
if(NOT APPLE)
  target_link_options(cordon_shared PRIVATE -Wl,--no-undefined)
endif()

# Three install components, which are the three Debian packages below: `runtime` (the programs),
# `library` (libcordon.so.0) and `development` (headers, the .so link, pkg-config, CMake).
install(TARGETS cordon_shared EXPORT cordonTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Public headers only: include/cordon/ is the public API by definition (src/ headers are not).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cordon
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
  FILES_MATCHING PATTERN "*.h")

# CMake package: find_package(cordon) -> target cordon::cordon.
set(cordon_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${cordon_cmake_dir}
  COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cordonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cordonConfig.cmake
  INSTALL_DESTINATION ${cordon_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor bump may break the API
install(FILES ${PROJECT_BINARY_DIR}/cordonConfig.cmake ${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  DESTINATION ${cordon_cmake_dir} COMPONENT development)

# pkg-config: written when it is installed, with the prefix it is installed under (`cmake
# --install --prefix ANY`, or /usr in the Debian package), so pkg-config prints plain paths
# (-I/usr/include, which it then leaves out as a system directory).
install(CODE "
  set(CORDON_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(CORDON_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CORDON_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(PROJECT_DESCRIPTION \"${PROJECT_DESCRIPTION}\")
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/cordon.pc.in\"
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/cordon.pc\" @ONLY)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/cordon.pc\")
  " COMPONENT development)

# The bwrap backend's in-sandbox trampoline: found at <bindir>/../libexec/cordon/ by the cordon
# binary (src/bwrap/launch.cc, LocateTrampoline).
if(TARGET cordon-bwrap-exec)
  install(TARGETS cordon-bwrap-exec RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon
    COMPONENT runtime)
endif()
# `cordon`: the front in bin/ and the full executable in libexec/cordon/, where the front finds
# it (decision 0028); without a front, the full executable is bin/cordon.
if(CORDON_COMMAND_TARGET STREQUAL "cordon-front")
  install(TARGETS cordon-front RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(TARGETS cordon RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon COMPONENT runtime)
else()
  install(TARGETS cordon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endif()
# The sandbox's init once the command runs (src/linux/init_reaper.h), found the same way.
if(TARGET cordon-init)
  install(TARGETS cordon-init RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon
    COMPONENT runtime)
endif()
# The resolver of network-by-domain runs (src/linux/resolver_program.h), found the same way.
if(TARGET cordon-resolver)
  install(TARGETS cordon-resolver RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon
    COMPONENT runtime)
endif()

# The man page and the shell completions, generated at build time from the binary's own CLI11
# definitions (src/cli/CMakeLists.txt, `cordon __generate`). Paths as Debian's man-db,
# bash-completion (loads completions/<command> on demand) and zsh (vendor-completions is on
# its default $fpath) expect them.
if(TARGET cordon_manual)
  install(FILES ${CORDON_GENERATED_DIR}/cordon.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
    COMPONENT runtime)
  install(FILES ${CORDON_GENERATED_DIR}/cordon.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME cordon
    COMPONENT runtime)
  install(FILES ${CORDON_GENERATED_DIR}/_cordon
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT runtime)
endif()

# Debian packages, as Debian ships a tool with a library (decision 0058): `cordon` (the
# programs, the manual, the completions), `libcordon0` (the shared library) and `libcordon-dev`
# (what building against it needs), each with its copyright and changelog, stripped, with the
# debug information in a -dbgsym package (.ddeb) beside each. Build with debug information
# (RelWithDebInfo) and, for Debian's paths (/usr/lib/<triplet>), -DCMAKE_INSTALL_PREFIX=/usr;
# tests/consumer/deb_test.sh builds, checks with lintian and installs them.
set(CORDON_PACKAGE_MAINTAINER "cordon maintainers <maintainers@users.noreply.a-seed-103152bf.example>"
  CACHE STRING "The Debian packages' Maintainer field")
set(cordon_deb_components runtime library development)
set(cordon_deb_names cordon libcordon0 libcordon-dev)
foreach(component package IN ZIP_LISTS cordon_deb_components cordon_deb_names)
  set(doc ${CMAKE_INSTALL_DATADIR}/doc/${package})
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright DESTINATION ${doc}
    COMPONENT ${component})
  # The changelog of a native package: /usr/share/doc/<package>/changelog.gz, gzip -9n.
  set(CORDON_DEB_PACKAGE ${package})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in
    ${PROJECT_BINARY_DIR}/debian/${package}/changelog @ONLY)
  execute_process(COMMAND gzip -9n -c ${PROJECT_BINARY_DIR}/debian/${package}/changelog
    OUTPUT_FILE ${PROJECT_BINARY_DIR}/debian/${package}/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
  install(FILES ${PROJECT_BINARY_DIR}/debian/${package}/changelog.gz DESTINATION ${doc}
    COMPONENT ${component})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/cordon.lintian-overrides
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME cordon COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/libcordon0.lintian-overrides
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME libcordon0 COMPONENT library)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cordon)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${CORDON_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime library development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <package>_<version>_<arch>.deb
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME cordon)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_NAME libcordon0)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libcordon-dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Each package's synopsis is the first line of its description, and lines are kept as written
# (under 80 columns); an empty line separates paragraphs. CPack puts
# CPACK_PACKAGE_DESCRIPTION_SUMMARY before every description unless it is CPack's own default,
# which it is set to here for that reason.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "cordon built using CMake")
set(cordon_deb_about
  "cordon runs the shell commands an AI coding agent chooses inside a fence: a
command policy refuses dangerous command text before anything runs, and an OS
sandbox confines the command and everything it starts (writes only where
allowed, network only where allowed, secrets hidden, a minimal environment, a
process tree that dies as a whole).")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "sandbox for the shell commands AI coding agents run
${cordon_deb_about}

This package holds the cordon command: run, check, status, sandbox, doctor,
serve, and mcp (an MCP server an agent can use as its shell tool).")
set(CPACK_DEBIAN_LIBRARY_DESCRIPTION "sandbox for AI agents' shell commands - shared library
${cordon_deb_about}

This package holds libcordon, the library with a C API that the cordon
command is built on, for programs that run commands through it.")
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION "sandbox for AI agents' shell commands - development files
${cordon_deb_about}

This package holds what building against libcordon needs: the headers, the
pkg-config file and the CMake package (find_package(cordon)).")
# Runtime dependencies from the ELF files themselves (dpkg-shlibdeps): libre2-9, libseccomp2,
# libfmt9, libstdc++6 and libc6 for libcordon0 on Debian 12; libldns3, libssl3 and
# libhttp-parser2.9 for the resolver. The cordon executables are static PIEs (decision 0024), so
# these packages must be rebuilt when glibc, libstdc++, RE2 or libseccomp get a security fix.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)  # for the packages with a library: libcordon0
# dpkg's ldconfig trigger, as Debian's library packages activate it (a control file that must be
# named `triggers`); CPack's own scripts call ldconfig too (libcordon0.lintian-overrides).
file(COPY_FILE ${PROJECT_SOURCE_DIR}/cmake/debian/libcordon0.triggers
  ${PROJECT_BINARY_DIR}/debian/libcordon0/triggers)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/libcordon0/triggers)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "libcordon0 (= ${PROJECT_VERSION})")
# Completion on a stock Debian needs bash-completion, which is not installed by default.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "bash-completion")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "bubblewrap")
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
include(CPack)
