// File: engine/testing/capture.h
//
// Test helpers: run an engine on a Scenario and capture its JSON Lines log as
// a string, and report the first line where two logs differ.
#ifndef QS_ENGINE_TESTING_CAPTURE_H_
#define QS_ENGINE_TESTING_CAPTURE_H_

#include <sstream>
#include <string>
#include <vector>

#include "engine/log/event_log.h"
#include "engine/run.h"
#include "engine/model/scenario.h"

namespace qs::testing {

struct Captured {
  std::string log;
  RunStats stats;
};

// `extra`, when set, sees every record beside the log (a SummaryBuilder).
inline Captured CaptureFast(const Scenario& sc, const RunOptions& o, LogSink* extra = nullptr) {
  std::ostringstream out;
  Captured c;
  {
    JsonlWriter w(&out);
    TeeSink both(extra != nullptr ? std::vector<LogSink*>{&w, extra} : std::vector<LogSink*>{&w});
    c.stats = RunFastEngine(sc, both, o);
  }
  c.log = out.str();
  return c;
}

inline Captured CaptureFast(const Scenario& sc, bool full_check = true) {
  RunOptions o;
  o.check_invariants = true;
  o.full_invariant_check = full_check;
  return CaptureFast(sc, o);
}

inline Captured CaptureReference(const Scenario& sc, int64_t cycle_preemptions = kDefaultCyclePreemptions,
                                 bool wait_causes = false, LogSink* extra = nullptr) {
  std::ostringstream out;
  Captured c;
  {
    JsonlWriter w(&out);
    TeeSink both(extra != nullptr ? std::vector<LogSink*>{&w, extra} : std::vector<LogSink*>{&w});
    c.stats = RunReferenceEngine(sc, both, /*check_invariants=*/true, cycle_preemptions, wait_causes);
  }
  c.log = out.str();
  return c;
}

// "" when equal, else a short description of the first differing line.
inline std::string FirstDifference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(sa, la));
    const bool hb = static_cast<bool>(std::getline(sb, lb));
    if (!ha && !hb) return "logs differ only in trailing bytes";
    if (!ha || !hb || la != lb) {
      return "line " + std::to_string(line) + ":\n  fast:      " + (ha ? la : "<end>") +
             "\n  reference: " + (hb ? lb : "<end>");
    }
  }
}

}  // namespace qs::testing

#endif  // QS_ENGINE_TESTING_CAPTURE_H_
