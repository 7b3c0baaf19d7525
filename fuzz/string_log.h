// File: fuzz/string_log.h
//
// What the engine fuzzers compare: an engine's JSON Lines log (the one
// formatter, JsonlWriter::Append*) in a string, and the first line where two
// such logs differ.
//
// Thread-safety: a StringLog is used by one run at a time.
#ifndef QS_FUZZ_STRING_LOG_H_
#define QS_FUZZ_STRING_LOG_H_

#include <sstream>
#include <string>

#include "engine/log/event_log.h"

namespace qs::fuzz {

// Writes into a string that keeps its capacity from one execution to the
// next: growing a fresh buffer for every run cost a third of each execution
// under ASan.
class StringLog : public LogSink {
 public:
  explicit StringLog(std::string* out) : out_(out) { out_->clear(); }
  void OnJob(const JobRecord& r) override { JsonlWriter::AppendJob(*out_, r); }
  void OnRejected(const RejectedRecord& r) override { JsonlWriter::AppendRejected(*out_, r); }
  void OnSnapshot(const SnapshotRecord& r) override { JsonlWriter::AppendSnapshot(*out_, r); }

 private:
  std::string* out_;
};

// The first differing line of two logs, with one line of context before it.
inline std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb, prev;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(sa, la));
    const bool hb = static_cast<bool>(std::getline(sb, lb));
    if (!ha && !hb) return "logs differ only in trailing bytes";
    if (!ha || !hb || la != lb) {
      return "first difference at line " + std::to_string(line) + "\n  A: " + (ha ? la : "<end of log>") +
             "\n  B: " + (hb ? lb : "<end of log>") + "\n  previous (identical) line: " + (prev.empty() ? "<none>" : prev);
    }
    prev = la;
  }
}

}  // namespace qs::fuzz

#endif  // QS_FUZZ_STRING_LOG_H_
