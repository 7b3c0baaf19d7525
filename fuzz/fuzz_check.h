// File: fuzz/fuzz_check.h
//
// QS_FUZZ_CHECK: the fuzzers' always-on assertion. Unlike assert() it does not
// depend on NDEBUG, so release and sanitizer builds check the same things.
// On failure it prints the condition, where it is, and a message (anything
// streamable), then abort()s, which libFuzzer reports as a crash and saves the
// input.
//
//   QS_FUZZ_CHECK(use <= cap, "invariant 1: unit " << u << " uses " << use);
//
// Every message starts with a short tag ("invariant 1", "differential", ...)
// that scripts/fuzz-mutants greps to say which check caught a mutant.
#ifndef QS_FUZZ_FUZZ_CHECK_H_
#define QS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace qs::fuzz {

[[noreturn]] inline void FuzzCheckFailed(const char* cond, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "\nQS_FUZZ_CHECK failed: %s\n  at %s:%d\n  %s\n", cond, file, line, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace qs::fuzz

#define QS_FUZZ_CHECK(cond, msg)                                                   \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::ostringstream qs_fuzz_check_os_;                                        \
      qs_fuzz_check_os_ << msg; /* NOLINT */                                       \
      ::qs::fuzz::FuzzCheckFailed(#cond, __FILE__, __LINE__, qs_fuzz_check_os_.str()); \
    }                                                                              \
  } while (false)

#endif  // QS_FUZZ_FUZZ_CHECK_H_
