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
