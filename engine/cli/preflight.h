// File: engine/cli/preflight.h
//
// What will go wrong in a run, found before it (`quotasim validate`): the
// requests AWS would reject whatever the jobs do (configuration requests in
// order, submissions to shares that do not exist or are disabled, updates
// and terminations of jobs never submitted, values out of range), shares
// whose capacity limits name an instance type the service environment does
// not have, and jobs that can never run because the environment never has
// that many instances of their type. Each finding carries the JSON path of
// its request. Rejections that depend on the run (an update of a job that
// has already finished) are found only by the run, which logs them.
//
// Usage: one pass of NoteEnvironment() over every event, then one of Check()
// (the environment's largest size is known before jobs are judged).
//
// Thread-compatible.
#ifndef QS_ENGINE_CLI_PREFLIGHT_H_
#define QS_ENGINE_CLI_PREFLIGHT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/model/scenario.h"

namespace qs {

struct PreflightFinding {
  std::string path;     // JSON path of the request, e.g. "events[3]"
  std::string message;  // one line
};

class Preflight {
 public:
  explicit Preflight(const Scenario& head);

  void NoteEnvironment(const ScenarioEvent& ev);
  void Check(const ScenarioEvent& ev);

  // In event order; `total()` counts them all, `findings()` keeps the first
  // kKept.
  static constexpr size_t kKept = 200;
  const std::vector<PreflightFinding>& findings() const { return findings_; }
  int64_t total() const { return total_; }

 private:
  struct ShareState {
    bool enabled = true;
  };
  void Add(std::string path, std::string message);
  void CheckShareUnits(const std::string& path, const std::string& share, const std::vector<CapacityLimit>& limits);

  const Scenario& head_;
  std::map<std::string, int64_t> env_now_;  // unit -> capacity, as the requests go
  std::map<std::string, int64_t> env_max_;  // unit -> the largest capacity the run will see
  std::map<std::string, ShareState> shares_;
  std::set<std::string> submitted_;
  std::vector<PreflightFinding> findings_;
  int64_t total_ = 0;
};

}  // namespace qs

#endif  // QS_ENGINE_CLI_PREFLIGHT_H_
