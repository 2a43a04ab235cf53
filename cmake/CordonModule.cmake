# Shared compile settings for every cordon target.
add_library(cordon_warnings INTERFACE)
target_compile_options(cordon_warnings INTERFACE -Wall -Wextra -Wshadow -Wswitch-enum
                       -Wnon-virtual-dtor -Wno-missing-field-initializers)
# GCC 12 reports false -Wrestrict positives inside std::string at -O2 (GCC bug 105329, fixed in
# 13); the release preset would otherwise fail on correct code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(cordon_warnings INTERFACE -Wno-restrict)
endif()
if(CORDON_WERROR)
  target_compile_options(cordon_warnings INTERFACE -Werror)
endif()

# cordon_module(NAME SOURCES... [DEPS ...]) defines library cordon_NAME with alias cordon::NAME.
function(cordon_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(cordon_${name} STATIC ${ARG_SOURCES})
  add_library(cordon::${name} ALIAS cordon_${name})
  target_include_directories(cordon_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                                   ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(cordon_${name} PUBLIC ${ARG_DEPS} PRIVATE cordon_warnings)
  set_target_properties(cordon_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# cordon_test(NAME SOURCES... DEPS ... LABELS ... [TEST_FILTER expr]) defines a GoogleTest binary
# registered with ctest (TEST_FILTER: only the tests a --gtest_filter expression selects; the
# caller registers the rest itself).
function(cordon_test name)
  cmake_parse_arguments(ARG "" "TEST_FILTER" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main
                                        cordon_warnings)
  if(ARG_TEST_FILTER)
    gtest_discover_tests(${name} TEST_FILTER "${ARG_TEST_FILTER}"
                         PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
