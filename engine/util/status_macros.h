// File: engine/util/status_macros.h
//
// Propagation macros for absl::Status / absl::StatusOr. Abseil 20220623 (the
// Debian 12 package) does not ship status_macros.h, so quotasim keeps this
// tiny local pair.
//
//   QS_RETURN_IF_ERROR(expr);            // returns the Status if !ok()
//   QS_ASSIGN_OR_RETURN(auto v, expr);   // v = *expr or returns its Status
//
// Traps (as in Abseil's own): each macro expands to more than one statement,
// so never use it as the body of an unbraced if/else; a type with a comma in
// the left-hand side needs parentheses; a lambda using them needs an explicit
// return type.
#ifndef QS_ENGINE_UTIL_STATUS_MACROS_H_
#define QS_ENGINE_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define QS_STATUS_CONCAT_INNER_(a, b) a##b
#define QS_STATUS_CONCAT_(a, b) QS_STATUS_CONCAT_INNER_(a, b)

#define QS_RETURN_IF_ERROR(expr)                 \
  do {                                           \
    ::absl::Status qs_status_ = (expr);          \
    if (!qs_status_.ok()) return qs_status_;     \
  } while (false)

#define QS_ASSIGN_OR_RETURN(lhs, expr) \
  QS_ASSIGN_OR_RETURN_IMPL_(QS_STATUS_CONCAT_(qs_statusor_, __LINE__), lhs, expr)

#define QS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()

#endif  // QS_ENGINE_UTIL_STATUS_MACROS_H_
