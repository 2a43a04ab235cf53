# Third-party libraries, as seen by the modules: cordon::re2, cordon::seccomp, cordon::fmt,
# cordon::ldns, and cordon::http_parser, cordon::ssl (shared only).
#
# Each resolves per linked target. A target with the property CORDON_STATIC_DEPS (the `cordon`
# executable and the bwrap trampoline, through cordon_link_static_deps) is linked as a static
# PIE: the static archives, libstdc++ and glibc built in, unreferenced sections dropped. Every
# other target (libcordon.so, tests, benchmarks) gets Debian's shared libraries. Why: a process
# that maps six shared libraries and relocates them touches ~150 more pages before main, and
# each first touch of a page is a trap; RSS counts every page of them it maps (decision 0024).
option(CORDON_STATIC_DEPS "Link the cordon executables statically (static PIE)" ON)

set(cordon_is_static "$<BOOL:$<TARGET_PROPERTY:CORDON_STATIC_DEPS>>")
set(cordon_is_shared "$<NOT:${cordon_is_static}>")

add_library(cordon_dep_re2 INTERFACE)
add_library(cordon::re2 ALIAS cordon_dep_re2)
target_link_libraries(cordon_dep_re2 INTERFACE "$<${cordon_is_shared}:PkgConfig::RE2>")

add_library(cordon_dep_fmt INTERFACE)
add_library(cordon::fmt ALIAS cordon_dep_fmt)
target_link_libraries(cordon_dep_fmt INTERFACE "$<${cordon_is_shared}:fmt::fmt>")
target_include_directories(cordon_dep_fmt SYSTEM INTERFACE
  $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)

# DNS messages of the network-by-domain resolver (src/net/dns_message.cc).
add_library(cordon_dep_ldns INTERFACE)
add_library(cordon::ldns ALIAS cordon_dep_ldns)
target_link_libraries(cordon_dep_ldns INTERFACE "$<${cordon_is_shared}:PkgConfig::LDNS>")

# The proxy of the resolver program (src/resolver/), linked shared only: cordon itself does not
# link them.
add_library(cordon_dep_http_parser INTERFACE)
add_library(cordon::http_parser ALIAS cordon_dep_http_parser)
target_link_libraries(cordon_dep_http_parser INTERFACE ${HTTP_PARSER_LIBRARY})
target_include_directories(cordon_dep_http_parser SYSTEM INTERFACE ${HTTP_PARSER_INCLUDE_DIR})
add_library(cordon_dep_ssl INTERFACE)
add_library(cordon::ssl ALIAS cordon_dep_ssl)
target_link_libraries(cordon_dep_ssl INTERFACE OpenSSL::SSL)

add_library(cordon_dep_seccomp INTERFACE)
add_library(cordon::seccomp ALIAS cordon_dep_seccomp)
if(CORDON_LINUX)
  target_link_libraries(cordon_dep_seccomp INTERFACE "$<${cordon_is_shared}:PkgConfig::SECCOMP>")
endif()

set(CORDON_STATIC_DEPS_ACTIVE OFF)
if(CORDON_STATIC_DEPS AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  find_library(CORDON_RE2_ARCHIVE NAMES libre2.a)
  # ldns's archive references OpenSSL's libcrypto (its DNSSEC half, which a static link pulls
  # in only where an object it needs refers to it).
  find_library(CORDON_LDNS_ARCHIVE NAMES libldns.a)
  find_library(CORDON_CRYPTO_ARCHIVE NAMES libcrypto.a)
  if(CORDON_LINUX)
    find_library(CORDON_SECCOMP_ARCHIVE NAMES libseccomp.a)
  else()
    set(CORDON_SECCOMP_ARCHIVE "unused")
  endif()
  if(NOT CORDON_RE2_ARCHIVE OR NOT CORDON_SECCOMP_ARCHIVE OR NOT CORDON_LDNS_ARCHIVE OR
     NOT CORDON_CRYPTO_ARCHIVE)
    message(FATAL_ERROR "CORDON_STATIC_DEPS needs libre2.a, libseccomp.a, libldns.a and "
                        "libcrypto.a (Debian: libre2-dev, libseccomp-dev, libldns-dev, "
                        "libssl-dev); or configure with -DCORDON_STATIC_DEPS=OFF")
  endif()
  set(CORDON_STATIC_DEPS_ACTIVE ON)
  # Each function and object in its own section, so that --gc-sections can drop what the
  # static executables never reference (4.47 -> 4.31 MB of text, fewer pages mapped).
  add_compile_options(-ffunction-sections -fdata-sections)
  # Debian ships fmt as a shared library only: its compiled part, built here once.
  add_library(cordon_fmt_definitions STATIC ${PROJECT_SOURCE_DIR}/src/deps/fmt_definitions.cc)
  target_include_directories(cordon_fmt_definitions SYSTEM PRIVATE
    $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_libraries(cordon_dep_re2 INTERFACE "$<${cordon_is_static}:${CORDON_RE2_ARCHIVE}>"
                                                 "$<${cordon_is_static}:Threads::Threads>")
  target_link_libraries(cordon_dep_fmt INTERFACE "$<${cordon_is_static}:cordon_fmt_definitions>")
  target_link_libraries(cordon_dep_ldns INTERFACE "$<${cordon_is_static}:${CORDON_LDNS_ARCHIVE}>"
                                                  "$<${cordon_is_static}:${CORDON_CRYPTO_ARCHIVE}>")
  if(CORDON_LINUX)
    target_link_libraries(cordon_dep_seccomp INTERFACE
                          "$<${cordon_is_static}:${CORDON_SECCOMP_ARCHIVE}>")
  endif()
endif()

# cordon_link_static_deps(TARGET): link TARGET with the static libraries above (when enabled).
function(cordon_link_static_deps target)
  if(CORDON_STATIC_DEPS_ACTIVE)
    set_target_properties(${target} PROPERTIES CORDON_STATIC_DEPS ON)
    # -static-pie keeps address-space layout randomisation for the executable's own code (a
    # plain -static executable loads at a fixed address). -static-libstdc++ must not be added:
    # the compiler driver would then link glibc dynamically again.
    target_link_options(${target} PRIVATE -static-pie -Wl,--gc-sections)
  endif()
endfunction()
