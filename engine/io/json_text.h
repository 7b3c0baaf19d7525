// File: engine/io/json_text.h
//
// JSON text -> JSON values for the scenario reader (engine/io/scenario_json.cc,
// layer 1): a depth pre-scan (so nothing downstream ever meets a deeply
// nested document), then nlohmann's iterative SAX parser feeding DomBuilder,
// which builds nlohmann::json values, rejects duplicate keys, and hands each
// element of the top-level `events` array to a sink as soon as it is complete
// (then drops it), so memory stays proportional to the Scenario, not to a DOM
// of the whole file. Also the one-line message helpers and JSON paths that
// every error of the reader uses. Nothing here throws to the caller.
//
// Internal to engine/io/.
#ifndef QS_ENGINE_IO_JSON_TEXT_H_
#define QS_ENGINE_IO_JSON_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/io/scenario_json.h"
#include "nlohmann/json.hpp"

namespace qs::json_text {

using Json = nlohmann::json;

inline constexpr size_t kMaxQuotedBytes = 64;  // longest piece of input quoted in a message
// The payload error of a submission without one; the writer omits the field then.
inline constexpr char kPayloadRequired[] = "serviceRequestPayload is required";

// Message text: one line of ASCII whatever the input holds.
std::string_view Truncate(std::string_view s, size_t max, bool* cut);
std::string Quote(std::string_view s);        // "..." with escapes, truncated
std::string SingleQuote(std::string_view s);  // '...'
std::string Sanitize(std::string_view s);     // printable ASCII
std::string Describe(const Json& v);          // a value as a message names it

// JSON paths: quotaShares[2].capacityLimits[0].maxCapacity.
void AppendKey(std::string& out, std::string_view key);
void AppendIndex(std::string& out, size_t index);

// A JSON path as a chain of stack-allocated nodes: building one costs no
// allocation; it is rendered only for an error. A child points at its
// parent, so a Path must not outlive the Path it was made from.
class Path {
 public:
  Path() = default;

  Path Key(std::string_view key) const {
    Path p;
    p.parent_ = this;
    p.key_ = key;
    return p;
  }
  Path Index(size_t index) const {
    Path p;
    p.parent_ = this;
    p.index_ = index;
    p.is_index_ = true;
    return p;
  }

  // "events[3].request.jobName"; "top level" for the root.
  std::string ToString() const {
    std::vector<const Path*> chain;
    for (const Path* p = this; p->parent_ != nullptr; p = p->parent_) chain.push_back(p);
    std::string out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if ((*it)->is_index_) {
        AppendIndex(out, (*it)->index_);
      } else {
        AppendKey(out, (*it)->key_);
      }
    }
    if (out.empty()) return "top level";
    return out;
  }

 private:
  const Path* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

// "line L, column C" of the last of the first `consumed` bytes.
std::string LineColumn(std::string_view text, size_t consumed);
// The offset at which nesting first exceeds max_depth, or 0.
size_t FindTooDeep(std::string_view text, size_t max_depth);
// nlohmann's what() without its prefix.
std::string NlohmannReason(std::string_view what);

// SAX handler building nlohmann::json values (see the file comment). When
// `stream_key` is not empty and the root is an object, each element of the
// array at root[stream_key] goes to `sink` (with its index) once complete and
// is then dropped; that array stays empty in root().
class DomBuilder {
 public:
  using Sink = std::function<absl::Status(size_t index, const Json& element)>;

  DomBuilder() = default;
  DomBuilder(std::string_view stream_key, Sink sink)
      : stream_key_(stream_key), sink_(std::move(sink)) {}

  // SAX interface (nlohmann::json_sax).
  bool null() { return Add(Json(nullptr)); }
  bool boolean(bool b) { return Add(Json(b)); }
  bool number_integer(Json::number_integer_t v) { return Add(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Add(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) { return Add(Json(v)); }
  bool string(Json::string_t& s) { return Add(Json(std::move(s))); }
  bool binary(Json::binary_t& b) { return Add(Json::binary(std::move(b))); }
  bool start_object(std::size_t /*size*/) { return Open(Json::value_t::object); }
  bool start_array(std::size_t /*size*/) { return Open(Json::value_t::array); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(Json::string_t& k) {
    auto& object = stack_.back()->get_ref<Json::object_t&>();
    auto [it, inserted] = object.try_emplace(std::move(k));
    if (!inserted) {
      location_ = CurrentPath();
      AppendKey(location_, k);  // try_emplace leaves k intact when not inserting
      reason_ = "duplicate key";
      return false;
    }
    slot_ = &it->second;
    if (stack_.size() == 1) top_key_ = it->first;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const Json::exception& ex) {
    consumed_ = position;
    reason_ = NlohmannReason(ex.what());
    return false;
  }

  Json& root() { return root_; }
  // Whether root[stream_key] was an array whose elements went to the sink.
  bool streamed() const { return streaming_ != nullptr; }
  // After a failed parse: the sink's error, or else (reason, and either a
  // byte count for a syntax error or a JSON path for a duplicate key).
  const absl::Status& sink_status() const { return sink_status_; }
  size_t consumed() const { return consumed_; }
  const std::string& location() const { return location_; }
  const std::string& reason() const { return reason_; }

 private:
  Json* Insert(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json* top = stack_.back();
    if (top->is_array()) {
      auto& array = top->get_ref<Json::array_t&>();
      array.push_back(std::move(v));
      return &array.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  bool Add(Json&& v) { return Done(Insert(std::move(v))); }

  bool Open(Json::value_t type) {
    if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) {  // FindTooDeep caught it first
      location_ = CurrentPath();
      reason_ = absl::StrCat("nesting deeper than ", kMaxJsonDepth, " levels");
      return false;
    }
    bool stream = type == Json::value_t::array && !stream_key_.empty() && stack_.size() == 1 &&
                  stack_.front()->is_object() && top_key_ == stream_key_;
    Json* v = Insert(Json(type));
    if (stream) streaming_ = v;
    stack_.push_back(v);
    return true;
  }

  bool Close() {
    Json* done = stack_.back();
    stack_.pop_back();
    return Done(done);
  }

  // A value is complete; stream it if it is an element of the streamed array.
  bool Done(Json* v) {
    if (streaming_ == nullptr || stack_.empty() || stack_.back() != streaming_) return true;
    absl::Status status = sink_(stream_count_, *v);
    ++stream_count_;
    streaming_->get_ref<Json::array_t&>().clear();
    if (!status.ok()) {
      sink_status_ = std::move(status);
      return false;
    }
    return true;
  }

  // JSON path of the innermost open container.
  std::string CurrentPath() const {
    std::string out;
    for (size_t i = 1; i < stack_.size(); ++i) {
      const Json* parent = stack_[i - 1];
      const Json* child = stack_[i];
      if (parent->is_array()) {
        size_t index = parent == streaming_
                           ? stream_count_
                           : static_cast<size_t>(child - parent->get_ref<const Json::array_t&>().data());
        AppendIndex(out, index);
      } else {
        for (const auto& [k, v] : parent->get_ref<const Json::object_t&>()) {
          if (&v == child) {
            AppendKey(out, k);
            break;
          }
        }
      }
    }
    return out;
  }

  Json root_;
  std::vector<Json*> stack_;  // open containers, root first
  Json* slot_ = nullptr;      // value slot of the last key of the innermost object
  std::string_view top_key_;  // last key of the root object
  std::string_view stream_key_;
  Sink sink_;
  Json* streaming_ = nullptr;
  size_t stream_count_ = 0;
  absl::Status sink_status_;
  size_t consumed_ = 0;
  std::string location_;
  std::string reason_;
};

// Outcome of ReadJsonText: ok, or a sink error, or a located problem.
struct TextResult {
  bool ok = false;
  absl::Status sink_status;
  std::string location;  // "line L, column C", or a JSON path
  std::string reason;
};


TextResult ReadJsonText(std::string_view text, DomBuilder& builder);

}  // namespace qs::json_text

#endif  // QS_ENGINE_IO_JSON_TEXT_H_
