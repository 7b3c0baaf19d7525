// File: engine/internal/mutants.h
//
// Deliberate bugs for proving that the fuzzers bite (fuzz/README.md,
// scripts/fuzz-mutants). A build with -DQS_MUTANT=k compiles bug k into the
// fast engine; the default 0 compiles none, and every QsMutant(k) folds to a
// constant false. Never set QS_MUTANT outside the mutant builds.
//
//   1 borrow cap off by one        (phase 2 lets Borrowed + b reach B + 1)
//   2 RESERVE lends                (a RESERVE share's headroom is idle)
//   3 reclaim ignores held capacity (Free does not subtract holds)
//   4 fill-back skipped            (every marked victim is preempted)
//   5 drain frees capacity early   (a victim's instances free at preemption start)
//   6 preemption retries off by one (FAILED at count == retries)
//   7 head-of-line ignored         (a never-fitting head does not block its share)
//   8 lost job on terminate        (terminating a RUNNABLE job leaves it nowhere)
//   9 entitled capacity lent       (a lender's head waiting within its own limit does not withhold)
//  10 victims return in place      (a returned victim takes the head from the reservation holder)
//  11 checkpoint one interval late (a preempted run keeps one interval less)
//  12 MaxRuntimeInSeconds ignored  (only timeoutConfig ends an attempt early)
//  13 availability off by one      (an attempt is provisioned one instance beyond availability)
//  14 capacity clock restarts      (the time limit counts from the last capacity error, not the first SCHEDULED)
//  15 victim tie-break reversed    (among equal priorities the oldest dispatch is preempted first)
//  16 visiting tie-break by name   (UNDER_LIMIT_FIRST: equal ratios ignore the older head)
//  17 wait causes swapped          (a head within its limit whose capacity is lent out and whose
//                                   environment is full reads ENVIRONMENT_FULL, not LENT_OUT)
#ifndef QS_ENGINE_INTERNAL_MUTANTS_H_
#define QS_ENGINE_INTERNAL_MUTANTS_H_

#ifndef QS_MUTANT
#define QS_MUTANT 0
#endif

namespace qs::engine_internal {

inline constexpr int kMutantCount = 17;
constexpr bool QsMutant(int id) { return QS_MUTANT == id; }

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_INTERNAL_MUTANTS_H_
