// Generated job names (JobNames::Sequential): ranks computed from the
// number and names written out on demand, a chunk of 4,096 at a time,
// published lock-free. Nothing here runs oneTBB, so the test also runs
// under ThreadSanitizer (label tsan; README, "Builds"). The comparison with
// JobNames::Build, the general path, is in engine/fast/stream_test.cc.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/model/scenario_index.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

// "j0" .. "j<n-1>" sorted by bytes: the names by rank.
std::vector<std::string> SortedNames(int64_t n) {
  std::vector<std::string> names;
  for (int64_t k = 0; k < n; ++k) names.push_back("j" + std::to_string(k));
  std::sort(names.begin(), names.end());
  return names;
}

TEST(JobNamesTest, GeneratedRanksAndNamesAreTheSortedOrder) {
  for (int64_t n : {1, 7, 10, 11, 20, 101, 999, 1000, 1001, 4097, 8193, 54321}) {
    const std::vector<std::string> want = SortedNames(n);
    const JobNames jn = JobNames::Sequential(n);
    ASSERT_EQ(jn.num_names(), n);
    for (int64_t k = 0; k < n; ++k) {
      const int32_t r = jn.RankOf(k);
      ASSERT_GE(r, 0) << n << " " << k;
      ASSERT_LT(r, n) << n << " " << k;
      ASSERT_EQ(want[static_cast<size_t>(r)], "j" + std::to_string(k)) << n << " " << k;
      if (k > 0) {
        ASSERT_EQ(jn.RankAfter(k, jn.RankOf(k - 1)), r) << n << " " << k;
      }
    }
    // Ranks asked for backwards: every chunk starts from NumberAt's walk.
    for (int32_t r = static_cast<int32_t>(n) - 1; r >= 0; --r) ASSERT_EQ(jn.Name(r), want[static_cast<size_t>(r)]) << n;
  }
}

// Asked for from copies of the JobNames and from two threads at once, every
// name is the same, each chunk is written once, and a view stays valid.
TEST(JobNamesTest, GeneratedNamesFromCopiesAndThreads) {
  const int64_t n = 3 * 4096 + 17;
  const std::vector<std::string> want = SortedNames(n);
  const JobNames names = JobNames::Sequential(n);
  std::vector<std::string_view> early(static_cast<size_t>(n));
  for (int64_t r = n - 1; r >= 0; r -= 7) early[static_cast<size_t>(r)] = names.Name(static_cast<int32_t>(r));
  const JobNames copy = names;
  auto read_all = [&](const JobNames& jn, bool backwards, std::vector<std::string_view>& out) {
    out.assign(static_cast<size_t>(n), {});
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = backwards ? n - 1 - i : i;
      out[static_cast<size_t>(r)] = jn.Name(static_cast<int32_t>(r));
    }
  };
  for (int round = 0; round < 4; ++round) {
    const JobNames fresh = JobNames::Sequential(n);
    std::vector<std::string_view> a, b;
    std::thread t1([&] { read_all(fresh, false, a); });
    std::thread t2([&] { read_all(fresh, round % 2 == 1, b); });
    t1.join();
    t2.join();
    for (int64_t r = 0; r < n; ++r) {
      const size_t i = static_cast<size_t>(r);
      ASSERT_EQ(a[i], want[i]) << r;
      ASSERT_EQ(a[i].data(), b[i].data()) << "one chunk per range, whichever thread wrote it";
    }
  }
  std::vector<std::string_view> c;
  read_all(copy, false, c);
  for (int64_t r = 0; r < n; ++r) {
    const size_t i = static_cast<size_t>(r);
    ASSERT_EQ(c[i], want[i]) << r;
    if (!early[i].empty()) {
      ASSERT_EQ(early[i].data(), c[i].data()) << "a copy shares the chunks";
    }
  }
}

}  // namespace
}  // namespace qs
