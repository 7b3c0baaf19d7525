// The fast engine's wait causes (RunOptions::wait_causes): at the end of each
// instant, why each RUNNABLE job has not started, written as cause lines
// (docs/semantics.md §9). The reference engine's twin is
// engine/reference/reference_wait_causes.cc, written on its own.
#include <cstdint>

#include "engine/fast/engine.h"

namespace qs::engine_internal {

WaitCause Engine::WaitCauseOf(int32_t s, int32_t h) {
  const Job& j = st_.jobs[h];
  const Share& sh = st_.shares[s];
  const int32_t u = j.unit;
  if (!st_.se_enabled) return WaitCause::kEnvironmentDisabled;
  if (!st_.NeverFitsReason(s, j).empty()) return WaitCause::kMisconfiguration;
  if (j.pending_victims > 0) return WaitCause::kDrainingVictims;
  const bool environment_full = st_.FreeFor(h) < j.n;
  if (sh.own[u] + j.n <= sh.limit[u]) {  // within its own limit
    if (QsMutant(17) && environment_full) return WaitCause::kEnvironmentFull;
    if (st_.Headroom(s, u) < j.n) return WaitCause::kLentOut;
    return environment_full ? WaitCause::kEnvironmentFull : WaitCause::kNextPass;
  }
  if (sh.strategy != Strategy::kLendAndBorrow) return WaitCause::kShareLimit;
  // Phase 2's own borrow-cap and lender checks (PlanBorrow's).
  const int64_t b = st_.ToBorrow(s, j);
  if (st_.BorrowCapRefuses(s, u, b)) return WaitCause::kBorrowLimit;
  if (GatherLenders(st_, s, u, lenders_scratch_) < b) return WaitCause::kNoIdleLender;
  return environment_full ? WaitCause::kEnvironmentFull : WaitCause::kNextPass;
}

void Engine::EmitCause(int32_t id, WaitCause cause) {
  const Job& j = st_.jobs[id];
  const std::string_view reason = st_.reasons.Text(j.reason);
  if (summary_ != nullptr) {
    JobTransition t = TransitionOf(id, JobStatus::kRunnable, reason);
    t.wait_cause = cause;
    summary_->Apply(t);
  }
  if (!opt_.job_records) return;
  JobRecord r = BaseRecord(id, JobStatus::kRunnable, reason);
  r.wait_cause = cause;
  sink_.OnJob(r);
}

void Engine::EmitWaitCauses() {
  // Heads, in share order: a former head still waiting is now behind one
  // (unless it had a RUNNABLE line in this instant: it is written below);
  // the head gets a line when it is new, its cause changed or it had a
  // RUNNABLE line in this instant.
  for (int32_t s = 0; s < st_.NumShares(); ++s) {
    Share& sh = st_.shares[s];
    const int32_t h = sh.deleted ? kNone : sh.head;
    if (sh.cause_job != kNone && sh.cause_job != h) {
      const Job& old = st_.jobs[sh.cause_job];
      if (old.seq == sh.cause_seq && old.status == JobStatus::kRunnable && !cause_fresh_seqs_.contains(old.seq)) {
        EmitCause(sh.cause_job, WaitCause::kBehindHead);
      }
      sh.cause_job = kNone;
      sh.cause = WaitCause::kNone;
    }
    if (h == kNone) continue;
    const Job& j = st_.jobs[h];
    const WaitCause cause = WaitCauseOf(s, h);
    if (cause_fresh_seqs_.erase(j.seq) > 0 || sh.cause_job != h || sh.cause_seq != j.seq || sh.cause != cause) EmitCause(h, cause);
    sh.cause_job = h;
    sh.cause_seq = j.seq;
    sh.cause = cause;
  }
  // The other jobs with a RUNNABLE line in this instant, in line order.
  for (const auto& [id, seq] : cause_fresh_) {
    if (cause_fresh_seqs_.erase(seq) == 0) continue;  // written already
    const Job& j = st_.jobs[id];
    if (j.seq != seq || j.status != JobStatus::kRunnable) continue;  // dispatched or ended since
    EmitCause(id, WaitCause::kBehindHead);
  }
  cause_fresh_.clear();
  cause_fresh_seqs_.clear();
}

}  // namespace qs::engine_internal
