// The config archive: the one way diffloco reads, writes and compares its configs (training
// configs, tasks, exported-policy metadata). A config struct lists its fields once, in a visit
// function (Drake's name-value archive):
//
//   template <class V> void visit(V& v) {
//     v.field("iterations", iterations, "training iterations", V::atLeast(1));
//     v.section("policy", policy);  // a struct with its own visit()
//   }
//
// and the visitors here do the rest: Reader (strict YAML: every key known, types and ranges
// checked; an error names file:line or the --set argument, the key path and what was expected,
// an unknown key comes with the closest known one), Writer (YAML with every field and its
// documentation as a comment, which the Reader reads back to the same values) and Flattener
// ((key path, value) pairs, for comparing configs). Overrides ("a.b.c=value", --set) are applied
// to the YAML tree before reading; the Reader's messages about their keys name them.
//
// Beyond field() and section(): optionalField (a key whose presence switches something on),
// group/optionalGroup (a section visited by a callable, for structs that have no visit()),
// nullableGroup (a section or null: std::optional), sections (a map from names the user chooses
// to sections), list (named entries in YAML order, as a task's terms), sequence (a YAML list of
// sections), check (a condition across fields, reported at a key). Field types: numbers, bool,
// string, Range, std::optional (null: none), lists of them, and maps from names to lists of
// numbers. JsonWriter writes the same tree as JSON (exported-policy metadata).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config/did_you_mean.h"
#include "config/range.h"

namespace diffloco::config {

// A constraint on a field: numeric range (also per entry of a list), list size, or choices.
struct Check {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool loOpen = false, hiOpen = false;
  bool infinite = false;    // numbers: +-inf (YAML .inf) accepted
  int size = -1;            // lists: required number of entries
  bool allowEmpty = false;  // lists of any size: [] too
  bool scalar = false;      // lists of any size: one value without brackets is a list of it
  std::vector<std::string> choices;

  Check sized(int n) const {
    Check c = *this;
    c.size = n;
    return c;
  }
  Check orScalar() const {
    Check c = *this;
    c.scalar = true;
    return c;
  }
  Check orInfinite() const {
    Check c = *this;
    c.infinite = true;
    return c;
  }
  bool accepts(double x) const {
    return (loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi);
  }
  std::string describe() const;  // "must be >= 1", "must be in [0, 1)", ...
};

// The constraint vocabulary of the visit() functions (V::atLeast(1), ...).
struct Checks {
  static Check range(double lo, double hi, bool loOpen, bool hiOpen) {
    Check c;
    c.lo = lo, c.hi = hi, c.loOpen = loOpen, c.hiOpen = hiOpen;
    return c;
  }
  static Check atLeast(double lo) { return range(lo, Check().hi, false, false); }
  static Check greater(double lo) { return range(lo, Check().hi, true, false); }
  static Check between(double lo, double hi) { return range(lo, hi, false, false); }
  static Check openLow(double lo, double hi) { return range(lo, hi, true, false); }
  static Check halfOpen(double lo, double hi) { return range(lo, hi, false, true); }
  static Check open(double lo, double hi) { return range(lo, hi, true, true); }
  static Check positive() { return greater(0); }
  static Check nonNegative() { return atLeast(0); }
  static Check oneOf(std::vector<std::string> choices) {
    Check c;
    c.choices = std::move(choices);
    return c;
  }
};

// Shortest text that reads back to exactly x ("inf" / "-inf" for infinities: messages).
std::string formatNumber(double x);
// A command-line argument as messages show it: control characters as \xHH (a NUL would end the
// message, a carriage return overwrite it).
std::string printable(const std::string& s);
// One line of text for messages about a node ("got '...'"), cut at 40 characters.
std::string shortText(const YAML::Node& n);
// The text of a map key; an error naming `file` and its line when the key is not a scalar.
std::string keyName(const YAML::Node& key, const std::string& file);
// "file:line" of a node, or `file` alone for a node without a mark (built in memory).
std::string located(const std::string& file, const YAML::Node& n);
// Every map in `root`, at any depth, names each key once (yaml-cpp keeps one of two equal keys
// without a word); a key given twice, or one that is not a name, is an error naming `file`, the
// line and the key's path. For files read without a Reader (a Reader's finish() checks its own).
void checkUniqueKeys(const YAML::Node& root, const std::string& file);

// An override of one key: a --set argument, or a key of a config that extends another.
struct Override {
  std::string path;    // a.b.c
  std::string text;    // as typed (printable)
  std::string origin;  // how messages name it; empty: "--set <text>"
  YAML::Node value;

  Override() = default;
  Override(const Override&) = default;
  // yaml-cpp's Node assignment writes the right side into the node the left side refers to
  // (shared with every copy of it); an Override's assignment rebinds its value instead, so that
  // shifting overrides in a vector does not overwrite the values of others.
  Override& operator=(const Override& o) {
    path = o.path, text = o.text, origin = o.origin;
    value.reset(o.value);
    return *this;
  }

  std::string label() const { return origin.empty() ? "--set " + text : origin; }
};

// Parses "key.path=value" (a YAML value); throws naming the argument.
Override parseOverride(const std::string& arg);
// Writes o.value at o.path's keys from the `skip`-th on below root, creating sections as needed.
void applyOverride(YAML::Node root, const Override& o, size_t skip = 0);

// Where the values being read came from: a file and the overrides applied to it.
struct Source {
  std::string file;
  std::vector<Override> sets;

  // "file:line" of a node, or the override that produced the key path.
  std::string where(const std::string& path, const YAML::Node& n) const;
};

[[noreturn]] void fail(const std::string& msg);

// How strict a Reader is beyond types and ranges.
struct ReadOptions {
  bool requireAll = false;     // every field and section must be given (file formats)
  bool ignoreUnknown = false;  // keys no visit asks for are skipped (older file formats)
};

// Strict reader of one YAML map into a struct with visit(): every key must be a field.
class Reader : public Checks {
 public:
  // `at`: the key naming this section (where messages about the section as a whole point).
  Reader(const YAML::Node& node, std::string path, const Source& src,
         const YAML::Node& at = YAML::Node(YAML::NodeType::Undefined),
         ReadOptions options = ReadOptions());

  template <class T>
  void field(const char* key, T& value, const char* /*doc*/, const Check& check = Check()) {
    const YAML::Node n = required(key);
    if (n) read(n, keyPath(key), value, check);
  }
  // A key whose presence means something (`friction: [0.5, 1.2]` switches friction
  // randomisation on): `present` says whether it was given.
  template <class T>
  void optionalField(const char* key, bool& present, T& value, const char* doc,
                     const Check& check = Check()) {
    const YAML::Node n = take(key);
    present = static_cast<bool>(n);
    if (n) read(n, keyPath(key), value, check);
  }

  template <class S>
  void section(const char* key, S& s) {
    group(key, "", [&](Reader& r) { s.visit(r); });
  }
  template <class F>
  void group(const char* key, const char* /*doc*/, F&& visitBody) {
    Reader r(required(key), keyPath(key), src_, keyNode(key), options_);
    visitBody(r);
    r.finish();
  }
  // A section or null (std::optional: none).
  template <class S, class F>
  void nullableGroup(const char* key, const char* doc, std::optional<S>& value, F&& visitBody) {
    const YAML::Node n = required(key);
    if (!n || n.IsNull()) {
      if (n) value.reset();
      return;
    }
    S s = value.value_or(S());
    group(key, doc, [&](Reader& r) { visitBody(r, s); });
    value = s;
  }
  template <class F>
  void optionalGroup(const char* key, const char* doc, bool& present, F&& visitBody) {
    present = static_cast<bool>(take(key));
    if (!present) return;
    Reader r(take(key), keyPath(key), src_, keyNode(key), options_);
    visitBody(r);
    r.finish();
  }

  // A map from names the user chooses to sections (curriculum.rewards.<term>).
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char* /*doc*/) {
    const YAML::Node n = take(key);
    const std::string p = keyPath(key);
    m.clear();
    if (!n || n.IsNull()) return;
    if (!n.IsMap()) bad(n, p, "expected a map of names to sections, got '" + shortText(n) + "'");
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string name = keyName(it->first, src_.file);
      Reader r(it->second, p + "." + name, src_, it->first, options_);
      S s;
      s.visit(r);
      r.finish();
      m[name] = s;
    }
  }

  // Named entries in YAML order (`rewards: {lin_vel_tracking: {weight: 1}, ...}`); T has a
  // `name`. visitItem(V&, T&) visits one entry (its name already set).
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, const char* /*doc*/, F&& visitItem) {
    const YAML::Node n = take(key);
    const std::string p = keyPath(key);
    items.clear();
    if (!n || n.IsNull()) return;
    if (!n.IsMap())
      bad(n, p, "expected a map of names to their settings, got '" + shortText(n) + "'");
    for (auto it = n.begin(); it != n.end(); ++it) {
      T item;
      item.name = keyName(it->first, src_.file);
      for (const auto& prev : items)
        if (prev.name == item.name) bad(it->first, p, "'" + item.name + "' given twice");
      Reader r(it->second, p + "." + item.name, src_, it->first, options_);
      visitItem(r, item);
      r.finish();
      items.push_back(std::move(item));
    }
  }

  // A YAML list of sections (`terms: [{name: a, size: 3}, ...]`); visitItem(V&, T&).
  template <class T, class F>
  void sequence(const char* key, std::vector<T>& items, const char* /*doc*/, F&& visitItem) {
    const YAML::Node n = required(key);
    const std::string p = keyPath(key);
    if (!n) return;
    items.clear();
    if (n.IsNull()) return;
    if (!n.IsSequence()) bad(n, p, "expected a list of sections, got '" + shortText(n) + "'");
    for (size_t i = 0; i < n.size(); ++i) {
      const YAML::Node e = n[i];
      T item;
      Reader r(e, p + "[" + std::to_string(i) + "]", src_, e, options_);
      visitItem(r, item);
      r.finish();
      items.push_back(std::move(item));
    }
  }

  // A condition across fields: when false, an error at `key` (empty: this section's key).
  void check(bool ok, const std::string& key, const std::string& msg) const;

  // Marks `key` as known and returns its node (undefined when absent).
  YAML::Node take(const std::string& key);
  // take(), and with ReadOptions::requireAll an error when the key is absent.
  YAML::Node required(const std::string& key);
  // The key node of `key` (for its line), or an undefined node.
  YAML::Node keyNode(const std::string& key) const;
  // Throws for the first key that no visit asked for.
  void finish() const;

  std::string keyPath(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  const Source& source() const { return src_; }
  bool has(const std::string& key) const { return node_ && node_.IsMap() && node_[key]; }

 private:
  [[noreturn]] void bad(const YAML::Node& n, const std::string& path,
                        const std::string& what) const;
  template <class T>
  T as(const YAML::Node& n, const std::string& path, const char* type) const {
    if (!n.IsScalar())
      bad(n, path, std::string("expected ") + type + ", got '" + shortText(n) + "'");
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      bad(n, path, std::string("expected ") + type + ", got '" + shortText(n) + "'");
    }
  }

  void read(const YAML::Node& n, const std::string& p, double& v, const Check& c) const;
  void read(const YAML::Node& n, const std::string& p, int& v, const Check& c) const;
  void read(const YAML::Node& n, const std::string& p, std::int64_t& v, const Check& c) const;
  void read(const YAML::Node& n, const std::string& p, bool& v, const Check& c) const;
  void read(const YAML::Node& n, const std::string& p, std::string& v, const Check& c) const;
  void read(const YAML::Node& n, const std::string& p, Range& v, const Check& c) const;
  void read(const YAML::Node& n, const std::string& p,
            std::map<std::string, std::vector<double>>& v, const Check& c) const;
  template <class T>
  void read(const YAML::Node& n, const std::string& p, std::optional<T>& v, const Check& c) const {
    if (n.IsNull()) {
      v.reset();
      return;
    }
    T x;
    read(n, p, x, c);
    v = x;
  }
  template <class T>
  void read(const YAML::Node& n, const std::string& p, std::vector<T>& v, const Check& c) const {
    if (n.IsScalar() && (c.size == 1 || c.scalar)) {  // one value may be written without brackets
      T x;
      read(n, p, x, c);
      v = {x};
      return;
    }
    if (!n.IsSequence()) bad(n, p, "expected a list like [1, 2], got '" + shortText(n) + "'");
    if (c.size >= 0 && static_cast<int>(n.size()) != c.size)
      bad(n, p, "expected " + std::to_string(c.size) + " entries, got " + std::to_string(n.size()));
    if (c.size < 0 && n.size() == 0 && !c.allowEmpty) bad(n, p, "expected at least one entry");
    v.clear();
    for (size_t i = 0; i < n.size(); ++i) {
      T x;
      read(n[i], p + "[" + std::to_string(i) + "]", x, c);
      v.push_back(x);
    }
  }

  const YAML::Node node_;  // const: lookups of absent keys must not insert them
  std::string path_;
  const Source& src_;
  YAML::Node at_;
  ReadOptions options_;
  std::vector<std::string> known_;
};

// YAML text of one value, as the Writer puts it: JSON (strings double-quoted, numbers with a
// '.' so that YAML 1.1 readers see floats) but for infinities (.inf); reads back exactly.
std::string text(double v);
std::string text(int v);
std::string text(std::int64_t v);
std::string text(bool v);
std::string text(const std::string& v);
std::string text(const Range& v);
template <class T>
std::string text(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + text(v[i]);
  return s + "]";
}
std::string text(const std::map<std::string, std::vector<double>>& v);
template <class T>
std::string text(const std::optional<T>& v) {
  return v ? text(*v) : "null";
}

// Writes a struct as YAML lines, each field with its documentation as a comment.
class Writer : public Checks {
 public:
  Writer(std::ostringstream& out, int indent) : out_(out), pad_(indent, ' ') {}

  template <class T>
  void field(const char* key, const T& value, const char* doc, const Check& = Check()) {
    line(key, text(value), doc);
  }
  template <class T>
  void field(const char* key, const std::vector<T>& value, const char* doc,
             const Check& check = Check()) {
    // A list of one value is written as the value (the Reader takes either).
    line(key, (check.size == 1 || check.scalar) && value.size() == 1 ? text(value[0]) : text(value),
         doc);
  }
  template <class T>
  void optionalField(const char* key, const bool& present, const T& value, const char* doc,
                     const Check& check = Check()) {
    if (present) field(key, value, doc, check);
  }
  template <class S>
  void section(const char* key, S& s) {
    group(key, "", [&](Writer& w) { s.visit(w); });
  }
  template <class F>
  void group(const char* key, const char* doc, F&& visitBody) {
    std::ostringstream body;
    Writer w(body, static_cast<int>(pad_.size()) + 2);
    visitBody(w);
    nested(key, doc, body.str());
  }
  template <class F>
  void optionalGroup(const char* key, const char* doc, const bool& present, F&& visitBody) {
    if (present) group(key, doc, std::forward<F>(visitBody));
  }
  template <class S, class F>
  void nullableGroup(const char* key, const char* doc, std::optional<S>& value, F&& visitBody) {
    if (value)
      group(key, doc, [&](Writer& w) { visitBody(w, *value); });
    else
      line(key, "null", doc);
  }
  template <class T, class F>
  void sequence(const char* key, std::vector<T>& items, const char* doc, F&& visitItem) {
    std::string body;
    for (auto& item : items) {
      std::ostringstream one;
      Writer w(one, static_cast<int>(pad_.size()) + 4);
      visitItem(w, item);
      body += entry(one.str());
    }
    if (items.empty())
      line(key, "[]", doc);
    else
      nested(key, doc, body);
  }
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char* doc) {
    group(key, doc, [&](Writer& w) {
      for (auto& [name, s] : m) w.section(name.c_str(), s);
    });
  }
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, const char* doc, F&& visitItem) {
    group(key, doc, [&](Writer& w) {
      for (auto& item : items)
        w.group(item.name.c_str(), "", [&](Writer& e) { visitItem(e, item); });
    });
  }
  void check(bool, const std::string&, const std::string&) const {}

 private:
  void line(const std::string& key, const std::string& value, const std::string& doc);
  void nested(const std::string& key, const std::string& doc, const std::string& body);
  std::string entry(const std::string& body) const;  // a section's lines as a list entry "- ..."

  std::ostringstream& out_;
  std::string pad_;
};

// (key path, value text) of every field; a list also gives its names in order under its key.
class Flattener : public Checks {
 public:
  Flattener(std::vector<std::pair<std::string, std::string>>& out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}

  template <class T>
  void field(const char* key, const T& value, const char*, const Check& = Check()) {
    out_.emplace_back(prefix_ + key, text(value));
  }
  template <class T>
  void optionalField(const char* key, const bool& present, const T& value, const char* doc,
                     const Check& check = Check()) {
    if (present) field(key, value, doc, check);
  }
  template <class S>
  void section(const char* key, S& s) {
    Flattener f(out_, prefix_ + key + ".");
    s.visit(f);
  }
  template <class F>
  void group(const char* key, const char*, F&& visitBody) {
    Flattener f(out_, prefix_ + key + ".");
    visitBody(f);
  }
  template <class F>
  void optionalGroup(const char* key, const char* doc, const bool& present, F&& visitBody) {
    if (present) group(key, doc, std::forward<F>(visitBody));
  }
  template <class S, class F>
  void nullableGroup(const char* key, const char*, std::optional<S>& value, F&& visitBody) {
    if (!value) {
      out_.emplace_back(prefix_ + key, "null");
      return;
    }
    Flattener f(out_, prefix_ + key + ".");
    visitBody(f, *value);
  }
  template <class T, class F>
  void sequence(const char* key, std::vector<T>& items, const char*, F&& visitItem) {
    out_.emplace_back(prefix_ + key, std::to_string(items.size()) + " entries");
    for (size_t i = 0; i < items.size(); ++i) {
      Flattener f(out_, prefix_ + key + "[" + std::to_string(i) + "].");
      visitItem(f, items[i]);
    }
  }
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char*) {
    for (auto& [name, s] : m) {
      Flattener f(out_, prefix_ + key + "." + name + ".");
      s.visit(f);
    }
  }
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, const char*, F&& visitItem) {
    std::string names;
    for (const auto& item : items) names += (names.empty() ? "" : ", ") + item.name;
    out_.emplace_back(prefix_ + key, "[" + names + "]");
    for (auto& item : items) {
      Flattener f(out_, prefix_ + key + "." + item.name + ".");
      visitItem(f, item);
    }
  }
  void check(bool, const std::string&, const std::string&) const {}

 private:
  std::vector<std::pair<std::string, std::string>>& out_;
  std::string prefix_;
};

// A JSON string: double quotes, backslash escapes.
std::string json(const std::string& v);
// Whether every number in a value is finite (JSON has no infinities).
inline bool finite(double v) {
  return v - v == 0;
}
template <class T>
bool finite(const T&) {
  return true;
}
template <class T>
bool finite(const std::vector<T>& v) {
  for (const auto& x : v)
    if (!finite(x)) return false;
  return true;
}
template <class T>
bool finite(const std::optional<T>& v) {
  return !v || finite(*v);
}
inline bool finite(const Range& v) {
  return finite(v.lo) && finite(v.hi);
}
inline bool finite(const std::map<std::string, std::vector<double>>& v) {
  for (const auto& [k, x] : v)
    if (!finite(x)) return false;
  return true;
}

// Writes the tree as one JSON object (members in visiting order, documentation left out).
class JsonWriter : public Checks {
 public:
  explicit JsonWriter(std::string& out, int depth = 0) : out_(out), depth_(depth) {}

  // The Writer's text of each value, which is JSON for finite numbers.
  template <class T>
  void field(const char* key, const T& value, const char*, const Check& = Check()) {
    if (!finite(value)) fail(std::string(key) + ": JSON has no non-finite numbers");
    member(key, text(value));
  }
  template <class T>
  void optionalField(const char* key, const bool& present, const T& value, const char* doc,
                     const Check& check = Check()) {
    if (present) field(key, value, doc, check);
  }
  template <class S>
  void section(const char* key, S& s) {
    group(key, "", [&](JsonWriter& w) { s.visit(w); });
  }
  template <class F>
  void group(const char* key, const char*, F&& visitBody) {
    member(key, object([&](JsonWriter& w) { visitBody(w); }));
  }
  template <class F>
  void optionalGroup(const char* key, const char* doc, const bool& present, F&& visitBody) {
    if (present) group(key, doc, std::forward<F>(visitBody));
  }
  template <class S, class F>
  void nullableGroup(const char* key, const char*, std::optional<S>& value, F&& visitBody) {
    member(key, value ? object([&](JsonWriter& w) { visitBody(w, *value); }) : "null");
  }
  template <class S>
  void sections(const char* key, std::map<std::string, S>& m, const char*) {
    member(key, object([&](JsonWriter& w) {
             for (auto& [name, s] : m) w.section(name.c_str(), s);
           }));
  }
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, const char*, F&& visitItem) {
    member(key, object([&](JsonWriter& w) {
             for (auto& item : items)
               w.group(item.name.c_str(), "", [&](JsonWriter& e) { visitItem(e, item); });
           }));
  }
  template <class T, class F>
  void sequence(const char* key, std::vector<T>& items, const char*, F&& visitItem) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ",\n   " : "") + object([&](JsonWriter& w) { visitItem(w, items[i]); });
    member(key, s + "]");
  }
  void check(bool, const std::string&, const std::string&) const {}

  // The members a visit writes, as a JSON object.
  template <class F>
  std::string object(F&& visitBody) {
    std::string body;
    JsonWriter w(body, depth_ + 1);
    visitBody(w);
    return "{" + body + "}";
  }

 private:
  void member(const std::string& key, const std::string& value);

  std::string& out_;
  int depth_;
};

}  // namespace diffloco::config
