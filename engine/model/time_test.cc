#include "engine/model/time.h"

#include "gtest/gtest.h"

namespace qs {
namespace {

TEST(FormatSecondsTest, PrintsMillisecondsAsShortestDecimalSeconds) {
  struct Case {
    SimTime ms;
    const char* want;
  };
  const Case cases[] = {
      {0, "0.0"},       {20000, "20.0"},  {1500, "1.5"},   {1, "0.001"},
      {10, "0.01"},     {1230, "1.23"},   {-250, "-0.25"}, {86400000, "86400.0"},
      {kMaxSimTime, "1000000000000.0"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatSeconds(c.ms), c.want) << c.ms;
}

}  // namespace
}  // namespace qs
