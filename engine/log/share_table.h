// File: engine/log/share_table.h
//
// The per-share table that `quotasim run` and `replay` print: one row per
// quota share the scenario declares, in declaration order (shares without a
// job included), then any share seen only in the records (a replayed trace
// without declarations), then TOTAL. Each row has the share's configuration
// (capacity limits, strategy, borrowLimit, in-share preemption) beside its
// jobs, waits, preemptions of both kinds, and own, borrowed and lost use.
//
//   ShareDeclarations decl;
//   for (const ScenarioEvent& ev : scenario.events) decl.Note(ev, scenario);
//   std::string text = ShareTable(summary, decl.shares(), TableFormat::kTable);
//
// Formats: kTable for terminals (waits in s/m/h/d, instance-hours with one
// decimal, columns as wide as their widest cell); kCsv and kJson for
// programs (waits in seconds, use in instance-hours, exact values, the full
// list of limits).
//
// Thread-safety: thread-compatible.
#ifndef QS_ENGINE_LOG_SHARE_TABLE_H_
#define QS_ENGINE_LOG_SHARE_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/log/summary.h"
#include "engine/model/scenario.h"

namespace qs {

// A share as the scenario leaves it: created by an accepted CreateQuotaShare
// (the same checks the engines make), then changed by accepted
// UpdateQuotaShare requests, up to the horizon.
struct DeclaredShare {
  std::string name;
  std::vector<CapacityLimit> limits;
  Strategy strategy = Strategy::kReserve;
  int64_t borrow_limit = -1;  // percent; -1 unlimited (meaningful for LEND_AND_BORROW)
  Toggle in_share_preemption = Toggle::kDisabled;
  Toggle state = Toggle::kEnabled;
};

class ShareDeclarations {
 public:
  // Call for every event in scenario order. Returns the share the event
  // created or changed; nullptr for a rejected request, one after the
  // horizon, and any event other than CreateQuotaShare and UpdateQuotaShare.
  // The pointer is valid until the next Note.
  const DeclaredShare* Note(const ScenarioEvent& ev, const Scenario& head);
  const std::vector<DeclaredShare>& shares() const { return shares_; }

 private:
  std::vector<DeclaredShare> shares_;
};

enum class TableFormat : uint8_t { kTable, kCsv, kJson };
// "table" | "csv" | "json"; nullopt otherwise.
std::optional<TableFormat> ParseTableFormat(std::string_view name);

// The per-share rows and, in kTable, the lines after them (utilisation,
// simulated time, rejected requests, backlog).
std::string ShareTable(const Summary& s, const std::vector<DeclaredShare>& declared, TableFormat format);

// `quotasim whatif`: per share (the base run's declarations in order, then
// shares only the changed run declares, then TOTAL) the setting that differs
// and the change in jobs started (the waits are over them), wait p50/p95/p99, jobs succeeded, preemptions (both
// kinds) and lost instance-hours from `base` to `changed`. kTable: "a -> b
// (+d)" cells in human units; kCsv: base_, changed_ and delta_ columns per
// figure (seconds, instance-hours); kJson: each share's ShareTable row for
// both runs and a `delta` object.
std::string WhatIfTable(const Summary& base, const std::vector<DeclaredShare>& base_declared, const Summary& changed,
                        const std::vector<DeclaredShare>& changed_declared, TableFormat format);

// A duration in the unit a reader takes in at a glance: 42.0s, 7.5m, 3.2h, 12.4d.
std::string HumanDuration(SimTime ms);
// The same with its sign: +7.5m, -3.2h, +0.0s.
std::string SignedHumanDuration(SimTime ms);

// Rows of cells as aligned text: every column as wide as its widest cell,
// two spaces between columns, the first `left_aligned` columns padded on
// the right (names), the others on the left (numbers); one line per row,
// without trailing spaces.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows, size_t left_aligned);

}  // namespace qs

#endif  // QS_ENGINE_LOG_SHARE_TABLE_H_
