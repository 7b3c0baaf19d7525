// Imports every trace in ../shared/traces with its shipped mapping
// (traces/mappings/) and checks the counts its PROVENANCE.md states. Skipped
// when the shared traces are not there (they are not part of the repository).
#include <filesystem>
#include <string>

#include "engine/trace/replay.h"
#include "gtest/gtest.h"

namespace qs::trace {
namespace {

struct Shipped {
  const char* trace;    // under ../shared/traces
  const char* mapping;  // under traces/mappings
  int64_t rows, jobs, incomplete, zero_gpu;
  size_t shares;
  size_t limit_changes;
};

class ShippedTrace : public testing::TestWithParam<Shipped> {};

TEST_P(ShippedTrace, ImportsWithItsMapping) {
  const Shipped& s = GetParam();
  const std::string trace = std::string(QS_SHARED_DIR) + "/traces/" + s.trace;
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " not present";
  WorkloadInputs in;
  in.trace_path = trace;
  in.mapping_path = std::string(QS_SOURCE_DIR) + "/traces/mappings/" + s.mapping;
  absl::StatusOr<LoadedWorkload> w = LoadWorkload(in);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->workload.import.rows, s.rows);
  EXPECT_EQ(w->workload.import.skipped, 0);
  EXPECT_EQ(w->workload.import.incomplete, s.incomplete);
  EXPECT_EQ(w->workload.zero_gpu_skipped, s.zero_gpu);
  EXPECT_EQ(static_cast<int64_t>(w->workload.jobs.size()), s.jobs);
  EXPECT_EQ(w->workload.shares.size(), s.shares);
  EXPECT_EQ(w->workload.changes.size(), s.limit_changes);
  int64_t sum = 0;
  for (int64_t l : w->workload.limits) sum += l;
  EXPECT_LE(sum, w->workload.environment);
}

INSTANTIATE_TEST_SUITE_P(
    All, ShippedTrace,
    testing::Values(
        Shipped{"philly-derived/pollux_philly_jobs_by_vc.csv", "philly-pollux.json", 82247, 82247, 0, 0, 15, 0},
        Shipped{"philly-derived/pollux_philly_jobs_by_vc.csv", "philly-venus-quota.json", 82247, 82247, 0, 0, 15, 10},
        Shipped{"philly-derived/gavel_msr_seed0_per_vc_jobs.csv", "philly-gavel.json", 15264, 15264, 0, 0, 15, 0},
        Shipped{"philly-derived/rfold_philly_trace.csv", "philly-rfold.json", 111549, 111549, 0, 0, 1, 0},
        Shipped{"alibaba-openb-gpu-2023/openb_pod_list_default.csv", "alibaba-openb.json", 8152, 7064, 0, 1088, 4, 0},
        Shipped{"alibaba-openb-gpu-2023/openb_pod_list_default.csv", "alibaba-openb-priorities.json", 8152, 7064, 0, 1088, 1,
                0},
        Shipped{"swf-kth-sp2/KTH-SP2-1996-2.1-cln.swf.gz", "swf-kth-sp2.json", 28476, 28475, 1, 0, 8, 0},
        Shipped{"swf-coare-saliksik/DOST-ASTI_COARE-Saliksik-2020-cln.swf", "swf-coare-saliksik.json", 19760, 19760,
                0, 0, 4, 0},
        Shipped{"swf-lanl-cm5/LANL-CM5-1994-4.1-cln.swf.gz", "swf-lanl-cm5.json", 122060, 122057, 3, 0, 17, 0},
        Shipped{"swf-nasa-ipsc/NASA-iPSC-1993-3.1-cln.swf.gz", "swf-nasa-ipsc.json", 18239, 18239, 0, 0, 10, 0}));

}  // namespace
}  // namespace qs::trace
