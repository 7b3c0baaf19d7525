# Target helpers in the Abseil manner: every target gets the same warnings,
# sanitizer flags and labels.
include_guard(GLOBAL)

set(QS_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)

add_library(qs_build_flags INTERFACE)
target_compile_options(qs_build_flags INTERFACE ${QS_WARNINGS})
if(QS_WERROR)
  target_compile_options(qs_build_flags INTERFACE -Werror)
endif()
if(QS_TUNE_NATIVE)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-mtune=native QS_COMPILER_TAKES_MTUNE_NATIVE)
  if(QS_COMPILER_TAKES_MTUNE_NATIVE)
    target_compile_options(qs_build_flags INTERFACE -mtune=native)
  endif()
endif()
# Profile-guided optimization (g++; scripts/pgo-build records the
# profile, `release` and `bench` use it): "generate" instruments, "use"
# optimizes with the profile in QS_PGO_DIR where it has one and as usual
# where it has none (a missing or stale profile is a warning, never an
# error: an edited function is merely optimized without it). File names in
# the profile are relative to the build folder (-fprofile-prefix-path), so
# one profile serves every build folder.
if(QS_PGO)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "QS_PGO=${QS_PGO}: profile-guided builds are set up for g++ only")
  endif()
  if(QS_PGO STREQUAL "generate")
    target_compile_options(qs_build_flags INTERFACE -fprofile-generate=${QS_PGO_DIR} -fprofile-update=prefer-atomic
                           -fprofile-prefix-path=${CMAKE_BINARY_DIR})
    target_link_options(qs_build_flags INTERFACE -fprofile-generate=${QS_PGO_DIR})
  elseif(QS_PGO STREQUAL "use")
    target_compile_options(qs_build_flags INTERFACE -fprofile-use=${QS_PGO_DIR} -fprofile-partial-training
                           -fprofile-prefix-path=${CMAKE_BINARY_DIR} -Wno-missing-profile -Wno-error=coverage-mismatch
                           # g++ 12's false positives once the profile inlines more (std::optional<std::string>
                           # "may be used uninitialized" in aws_import.cc, -Wrestrict in std::string's operator+)
                           -Wno-maybe-uninitialized -Wno-restrict)
  else()
    message(FATAL_ERROR "QS_PGO=${QS_PGO}: expected empty, generate or use")
  endif()
endif()
if(QS_SANITIZE)
  if(QS_SANITIZE MATCHES "thread" AND QS_SANITIZE MATCHES "address")
    message(FATAL_ERROR "QS_SANITIZE: thread cannot be combined with address")
  endif()
  target_compile_options(qs_build_flags INTERFACE -fsanitize=${QS_SANITIZE} -fno-omit-frame-pointer
                         -fno-sanitize-recover=all)
  target_link_options(qs_build_flags INTERFACE -fsanitize=${QS_SANITIZE})
endif()

# qs_cc_library(NAME name SRCS ... DEPS ...)
function(qs_cc_library)
  cmake_parse_arguments(QS "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${QS_NAME} STATIC ${QS_SRCS})
  target_include_directories(${QS_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${QS_NAME} PUBLIC ${QS_DEPS} PRIVATE qs_build_flags)
  target_compile_features(${QS_NAME} PUBLIC cxx_std_20)
endfunction()

# qs_cc_test(NAME name SRCS ... DEPS ... LABELS ...)
function(qs_cc_test)
  if(NOT QS_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(QS "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${QS_NAME} ${QS_SRCS})
  target_link_libraries(${QS_NAME} PRIVATE ${QS_DEPS} GTest::gtest GTest::gtest_main qs_build_flags)
  target_compile_definitions(${QS_NAME} PRIVATE
      QS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      QS_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  add_test(NAME ${QS_NAME} COMMAND ${QS_NAME} --gtest_brief=1)
  if(NOT QS_LABELS)
    set(QS_LABELS unit)
  endif()
  if(NOT QS_TIMEOUT)
    set(QS_TIMEOUT 600)
  endif()
  set_tests_properties(${QS_NAME} PROPERTIES LABELS "${QS_LABELS}" TIMEOUT ${QS_TIMEOUT})
endfunction()
