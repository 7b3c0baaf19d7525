// File: engine/reference/reference_wait_causes.cc
//
// §9 of docs/semantics.md, the reference way: at the end of an instant every
// share's head is classified from scratch by the scans of the accounting
// section (§3), and every job that had a RUNNABLE line in the instant is
// looked at again. The fast engine's twin (engine/fast/wait_causes.cc)
// must write the same lines.
#include <set>

#include "engine/reference/reference_engine.h"

namespace qs::reference_internal {

WaitCause Engine::CauseOfHead(int s, int ji) const {
  const Job& j = jobs_[static_cast<size_t>(ji)];
  const Share& sh = shares_[static_cast<size_t>(s)];
  // The order of §9: what stops every dispatch first, then the head's own
  // state, then what the pass's fit tests would find missing.
  if (!env_enabled_) return WaitCause::kEnvironmentDisabled;
  if (!NeverFitReason(j).empty()) return WaitCause::kMisconfiguration;
  if (VictimsDrainingFor(ji) > 0) return WaitCause::kDrainingVictims;
  const bool free_short = FreeFor(j) < j.count;
  if (Own(s, j.unit) + j.count <= Limit(s, j.unit)) {
    if (Headroom(s, j.unit) < j.count) return WaitCause::kLentOut;
    return free_short ? WaitCause::kEnvironmentFull : WaitCause::kNextPass;
  }
  if (sh.strategy != Strategy::kLendAndBorrow) return WaitCause::kShareLimit;
  const BorrowNeed need = NeedToBorrow(s, j);  // phase 2's own arithmetic
  if (!WithinBorrowCap(s, j.unit, Borrowed(s, j.unit) + need.borrow)) return WaitCause::kBorrowLimit;
  if (need.idle < need.borrow) return WaitCause::kNoIdleLender;
  return free_short ? WaitCause::kEnvironmentFull : WaitCause::kNextPass;
}

void Engine::WriteWaitCauses() {
  std::set<int> owed(runnable_lines_.begin(), runnable_lines_.end());
  auto write = [&](int ji, WaitCause cause) {
    const Job& j = jobs_[static_cast<size_t>(ji)];
    JobRecord rec = BaseRecord(j);
    rec.status = JobStatus::kRunnable;
    rec.status_reason = j.reason;
    rec.wait_cause = cause;
    sink_.OnJob(rec);  // not Commit: the job's status and reason stay as they are
  };
  for (size_t s = 0; s < shares_.size(); ++s) {
    Share& sh = shares_[s];
    const int head = sh.deleted ? kNone : Head(static_cast<int>(s));
    if (sh.cause_job != kNone && sh.cause_job != head) {
      // A former head, still waiting, now waits behind another job; one
      // with a RUNNABLE line in this instant is written with the others.
      if (jobs_[static_cast<size_t>(sh.cause_job)].status == JobStatus::kRunnable && owed.count(sh.cause_job) == 0) {
        write(sh.cause_job, WaitCause::kBehindHead);
      }
      sh.cause_job = kNone;
      sh.cause = WaitCause::kNone;
    }
    if (head == kNone) continue;
    const WaitCause cause = CauseOfHead(static_cast<int>(s), head);
    const bool had_line = owed.erase(head) > 0;
    if (had_line || sh.cause_job != head || sh.cause != cause) write(head, cause);
    sh.cause_job = head;
    sh.cause = cause;
  }
  for (int ji : runnable_lines_) {
    if (owed.erase(ji) == 0) continue;
    if (jobs_[static_cast<size_t>(ji)].status != JobStatus::kRunnable) continue;
    write(ji, WaitCause::kBehindHead);  // every head was written above
  }
  runnable_lines_.clear();
}

}  // namespace qs::reference_internal
