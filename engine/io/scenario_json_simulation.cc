// File: engine/io/scenario_json_simulation.cc
//
// The scenario's `simulation` object -> Knobs (docs/semantics.md §2): the
// timing and policy knobs, the capacity model (simulation.capacity) and the
// latency distributions (simulation.latencies).
#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/io/json_read.h"
#include "engine/model/capacity.h"
#include "engine/util/status_macros.h"

namespace qs::json_read {
namespace {

// The required `instanceTypes` object of simulation.capacity and
// simulation.latencies: an entry per instance type (at most 1000, names not
// empty), each read by `convert` and given its name, in name order.
template <typename Convert>
auto AsInstanceTypes(const Reader& r, const Json& v, const Path& path, Convert convert)
    -> absl::StatusOr<std::vector<typename std::invoke_result_t<Convert, const Reader&, const Json&,
                                                                const Path&>::value_type>> {
  using Type = typename std::invoke_result_t<Convert, const Reader&, const Json&, const Path&>::value_type;
  QS_RETURN_IF_ERROR(r.Require(v, path, "instanceTypes"));
  const Json& types = v["instanceTypes"];
  const Path tp = path.Key("instanceTypes");
  if (!types.is_object()) return r.TypeError(tp, "an object keyed by instance type", types);
  if (types.size() > 1000) return r.Error(tp, "more than 1000 instance types");
  std::vector<Type> out;
  for (auto it = types.begin(); it != types.end(); ++it) {
    if (it.key().empty()) return r.Error(tp, "an instance type name must not be empty");
    QS_ASSIGN_OR_RETURN(Type t, convert(r, it.value(), tp.Key(it.key())));
    t.instance_type = it.key();
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const Type& a, const Type& b) { return a.instance_type < b.instance_type; });
  return out;
}

// simulation.capacity (docs/semantics.md §2, "Capacity").
absl::StatusOr<AvailabilityStep> AsAvailabilityStep(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"atSeconds", "instances"}));
  QS_RETURN_IF_ERROR(r.Require(v, path, "atSeconds"));
  QS_RETURN_IF_ERROR(r.Require(v, path, "instances"));
  AvailabilityStep out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "atSeconds", AsSeconds, &out.at));
  QS_RETURN_IF_ERROR(Get(r, v, path, "instances", AsInt32, &out.instances));
  if (out.instances < 0) {
    return r.Error(path.Key("instances"), absl::StrCat("must be >= 0, got ", out.instances));
  }
  return out;
}

absl::StatusOr<double> AsProbability(const Reader& r, const Json& v, const Path& path) {
  if (!v.is_number()) return r.TypeError(path, "a number between 0 and 1", v);
  const double p = v.get<double>();
  if (!(p >= 0 && p <= 1)) return r.Error(path, absl::StrCat("must be between 0 and 1, got ", Describe(v)));
  return p;
}

absl::StatusOr<TypeCapacity> AsTypeCapacity(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"failureProbability", "availability", "availabilityCsv"}));
  TypeCapacity out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "failureProbability", AsProbability, &out.failure_probability));
  QS_RETURN_IF_ERROR(Get(r, v, path, "availabilityCsv", AsString, &out.availability_csv));
  if (auto it = v.find("availability"); it != v.end()) {
    const Path p = path.Key("availability");
    if (v.contains("availabilityCsv")) {
      return r.Error(p, "give either availability or availabilityCsv, not both");
    }
    if (!it->is_array()) return r.TypeError(p, "an array", *it);
    if (it->empty()) return r.Error(p, "must list at least one {atSeconds, instances} step");
    for (size_t i = 0; i < it->size(); ++i) {
      QS_ASSIGN_OR_RETURN(AvailabilityStep step, AsAvailabilityStep(r, (*it)[i], p.Index(i)));
      if (!out.availability.empty() && step.at <= out.availability.back().at) {
        return r.Error(p.Index(i).Key("atSeconds"), "steps must be in strictly increasing atSeconds");
      }
      out.availability.push_back(step);
    }
  }
  if (v.contains("availabilityCsv") && out.availability_csv.empty()) {
    return r.Error(path.Key("availabilityCsv"), "must name a file");
  }
  return out;
}

absl::StatusOr<CapacityModel> AsCapacityModel(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"seed", "errorSeconds", "instanceTypes"}));
  CapacityModel out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "seed", AsSeed, &out.seed));
  QS_RETURN_IF_ERROR(Get(r, v, path, "errorSeconds", AsSeconds, &out.error_delay));
  if (out.error_delay < kMillisPerSecond) {
    return r.Error(path.Key("errorSeconds"), "must be at least 1 second (a capacity error takes time to report)");
  }
  QS_ASSIGN_OR_RETURN(out.types, AsInstanceTypes(r, v, path, AsTypeCapacity));
  return out;
}

// simulation.latencies (docs/semantics.md §2, "Latency distributions").
// `cap` bounds every value the distribution can give (the drain's stop grace
// period), 0 when there is none but the 1e12 s of any time.
absl::StatusOr<LatencyDistribution> AsLatencyDistribution(const Reader& r, const Json& v, const Path& path,
                                                          SimTime cap) {
  if (!v.is_object()) return r.TypeError(path, "an object", v);
  QS_RETURN_IF_ERROR(r.Require(v, path, "distribution"));
  QS_RETURN_IF_ERROR(CheckOneOf(r, v, path, "distribution", {"CONSTANT", "UNIFORM", "LOGNORMAL"}));
  const std::string kind = v["distribution"].get<std::string>();
  LatencyDistribution d;
  auto over_cap = [&](const char* key, SimTime value) -> absl::Status {
    if (cap > 0 && value > cap) {
      return r.Error(path.Key(key), absl::StrCat("must be at most ", cap / kMillisPerSecond,
                                                 " seconds (SageMaker's stop grace period)"));
    }
    return absl::OkStatus();
  };
  if (kind == "CONSTANT") {
    QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"distribution", "seconds"}));
    QS_RETURN_IF_ERROR(r.Require(v, path, "seconds"));
    d.kind = Distribution::kConstant;
    QS_RETURN_IF_ERROR(Get(r, v, path, "seconds", AsSeconds, &d.a));
    QS_RETURN_IF_ERROR(over_cap("seconds", d.a));
  } else if (kind == "UNIFORM") {
    QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"distribution", "minSeconds", "maxSeconds"}));
    QS_RETURN_IF_ERROR(r.Require(v, path, "minSeconds"));
    QS_RETURN_IF_ERROR(r.Require(v, path, "maxSeconds"));
    d.kind = Distribution::kUniform;
    QS_RETURN_IF_ERROR(Get(r, v, path, "minSeconds", AsSeconds, &d.a));
    QS_RETURN_IF_ERROR(Get(r, v, path, "maxSeconds", AsSeconds, &d.max));
    if (d.max < d.a) return r.Error(path.Key("maxSeconds"), "must be >= minSeconds");
    QS_RETURN_IF_ERROR(over_cap("maxSeconds", d.max));
  } else {
    QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"distribution", "medianSeconds", "sigma", "maxSeconds"}));
    for (const char* key : {"medianSeconds", "sigma", "maxSeconds"}) QS_RETURN_IF_ERROR(r.Require(v, path, key));
    d.kind = Distribution::kLognormal;
    QS_RETURN_IF_ERROR(Get(r, v, path, "medianSeconds", AsSeconds, &d.median));
    QS_RETURN_IF_ERROR(Get(r, v, path, "maxSeconds", AsSeconds, &d.max));
    const Json& sigma = v["sigma"];
    if (!sigma.is_number() || !(sigma.get<double>() >= 0 && sigma.get<double>() <= 10)) {
      return r.Error(path.Key("sigma"), absl::StrCat("must be a number from 0 to 10, got ", Describe(sigma)));
    }
    d.sigma = sigma.get<double>();
    if (d.max < d.median) return r.Error(path.Key("maxSeconds"), "must be >= medianSeconds");
    QS_RETURN_IF_ERROR(over_cap("maxSeconds", d.max));
  }
  return d;
}

absl::StatusOr<TypeLatencies> AsTypeLatencies(const Reader& r, const Json& t, const Path& p) {
  QS_RETURN_IF_ERROR(r.CheckObject(t, p, {"provisionSeconds", "downloadSeconds", "preemptionDrainSeconds"}));
  TypeLatencies lat;
  struct Field {
    const char* key;
    std::optional<LatencyDistribution>* out;
    SimTime cap;
  };
  for (const Field& f : {Field{"provisionSeconds", &lat.provision, 0}, Field{"downloadSeconds", &lat.download, 0},
                         Field{"preemptionDrainSeconds", &lat.drain, kStopGracePeriod}}) {
    if (auto ft = t.find(f.key); ft != t.end()) {
      QS_ASSIGN_OR_RETURN(LatencyDistribution d, AsLatencyDistribution(r, *ft, p.Key(f.key), f.cap));
      *f.out = d;
    }
  }
  return lat;
}

absl::StatusOr<LatencyModel> AsLatencyModel(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"seed", "instanceTypes"}));
  LatencyModel out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "seed", AsSeed, &out.seed));
  QS_ASSIGN_OR_RETURN(out.types, AsInstanceTypes(r, v, path, AsTypeLatencies));
  return out;
}

}  // namespace

absl::StatusOr<Knobs> AsKnobs(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(
      v, path,
      {"submitLatencySeconds", "provisionSeconds", "downloadSeconds", "schedulingIntervalSeconds",
       "preemptionDrainSeconds", "shareOrder", "victimOrder", "backfill", "unassignedCapacity",
       "entitledCapacity", "victimReturn", "timeLimitClock", "checkpointIntervalSeconds", "horizonSeconds", "capacity", "latencies"}));
  Knobs k;
  QS_RETURN_IF_ERROR(Get(r, v, path, "submitLatencySeconds", AsSeconds, &k.submit_latency));
  QS_RETURN_IF_ERROR(Get(r, v, path, "provisionSeconds", AsSeconds, &k.provision));
  QS_RETURN_IF_ERROR(Get(r, v, path, "downloadSeconds", AsSeconds, &k.download));
  QS_RETURN_IF_ERROR(
      Get(r, v, path, "schedulingIntervalSeconds", AsSeconds, &k.scheduling_interval));
  QS_RETURN_IF_ERROR(Get(r, v, path, "preemptionDrainSeconds", AsSeconds, &k.preemption_drain));
  QS_RETURN_IF_ERROR(Get(r, v, path, "shareOrder", AsShareOrder, &k.share_order));
  QS_RETURN_IF_ERROR(Get(r, v, path, "victimOrder", AsVictimOrder, &k.victim_order));
  QS_RETURN_IF_ERROR(Get(r, v, path, "backfill", AsBool, &k.backfill));
  QS_RETURN_IF_ERROR(Get(r, v, path, "unassignedCapacity", AsUnassigned, &k.unassigned_capacity));
  QS_RETURN_IF_ERROR(Get(r, v, path, "entitledCapacity", AsEntitled, &k.entitled_capacity));
  QS_RETURN_IF_ERROR(Get(r, v, path, "victimReturn", AsVictimReturn, &k.victim_return));
  QS_RETURN_IF_ERROR(Get(r, v, path, "timeLimitClock", AsTimeLimitClock, &k.time_limit_clock));
  QS_RETURN_IF_ERROR(Get(r, v, path, "checkpointIntervalSeconds", AsInterval, &k.checkpoint_interval));
  QS_RETURN_IF_ERROR(Get(r, v, path, "horizonSeconds", AsSeconds, &k.horizon));
  QS_RETURN_IF_ERROR(Get(r, v, path, "capacity", AsCapacityModel, &k.capacity));
  QS_RETURN_IF_ERROR(Get(r, v, path, "latencies", AsLatencyModel, &k.latencies));
  return k;
}

}  // namespace qs::json_read
