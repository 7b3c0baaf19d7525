#include "engine/model/scenario.h"

namespace qs {

const char* StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kReserve: return "RESERVE";
    case Strategy::kLend: return "LEND";
    case Strategy::kLendAndBorrow: return "LEND_AND_BORROW";
  }
  return "?";
}

const char* ToggleName(Toggle t) { return t == Toggle::kEnabled ? "ENABLED" : "DISABLED"; }

const char* ShareOrderName(ShareOrder o) {
  switch (o) {
    case ShareOrder::kUnderLimitFirst: return "UNDER_LIMIT_FIRST";
    case ShareOrder::kRoundRobin: return "ROUND_ROBIN";
    case ShareOrder::kDeclaration: return "DECLARATION";
  }
  return "?";
}

const char* VictimOrderName(VictimOrder o) {
  switch (o) {
    case VictimOrder::kPriorityThenNewest: return "PRIORITY_THEN_NEWEST";
    case VictimOrder::kMostBorrowedFirst: return "MOST_BORROWED_FIRST";
  }
  return "?";
}

const char* UnassignedCapacityName(UnassignedCapacity u) {
  return u == UnassignedCapacity::kUnused ? "UNUSED" : "LENDABLE";
}

const char* EntitledCapacityName(EntitledCapacity e) {
  return e == EntitledCapacity::kWithheld ? "WITHHELD" : "LENDABLE";
}

const char* TimeLimitClockName(TimeLimitClock c) {
  return c == TimeLimitClock::kFromReason ? "FROM_REASON" : "AT_HEAD";
}

const char* VictimReturnName(VictimReturn v) {
  return v == VictimReturn::kBehindReservation ? "BEHIND_RESERVATION" : "IN_PLACE";
}

const char* DistributionName(Distribution d) {
  return d == Distribution::kConstant ? "CONSTANT" : d == Distribution::kUniform ? "UNIFORM" : "LOGNORMAL";
}

const char* ActionName(const Request& r) {
  static constexpr const char* kNames[] = {
      "SubmitServiceJob",   "UpdateServiceJob",         "TerminateServiceJob", "CreateQuotaShare",
      "UpdateQuotaShare",   "UpdateServiceEnvironment", "GetJobQueueSnapshot", "DeleteQuotaShare",
      "UpdateJobQueue",     "UpdateSchedulingPolicy"};
  static_assert(std::variant_size_v<Request> == sizeof(kNames) / sizeof(kNames[0]));
  return kNames[r.index()];
}

}  // namespace qs
