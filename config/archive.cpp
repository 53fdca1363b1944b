#include "config/archive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "config/yaml_guard.h"

namespace diffloco::config {

void fail(const std::string& msg) {
  throw std::runtime_error(msg);
}

std::string formatNumber(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[40];
  if (x == std::round(x) && std::abs(x) < 1e7) {  // 1000000, not 1e+06
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
  }
  for (int p = 6; p <= 17; ++p) {  // shortest text that reads back exactly
    std::snprintf(buf, sizeof buf, "%.*g", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

std::string shortText(const YAML::Node& n) {
  std::string s = n.IsScalar() ? n.Scalar() : YAML::Dump(n);
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string located(const std::string& file, const YAML::Node& n) {
  if (!n || n.Mark().is_null()) return file;
  return file + ":" + std::to_string(n.Mark().line + 1);
}

std::string keyName(const YAML::Node& key, const std::string& file) {
  if (!key.IsScalar())
    fail(located(file, key) + ": expected a name as key, got '" + shortText(key) + "'");
  return key.Scalar();
}

namespace {

void checkUniqueKeysBelow(const YAML::Node& n, const std::string& path, const std::string& file) {
  if (n.IsSequence()) {
    for (size_t k = 0; k < n.size(); ++k)
      checkUniqueKeysBelow(n[k], path + "[" + std::to_string(k) + "]", file);
  } else if (n.IsMap()) {
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string k = keyName(it->first, file);
      const std::string p = path.empty() ? k : path + "." + k;
      if (!seen.insert(k).second) fail(located(file, it->first) + ": '" + p + "' given twice");
      checkUniqueKeysBelow(it->second, p, file);
    }
  }
}

}  // namespace

void checkUniqueKeys(const YAML::Node& root, const std::string& file) {
  checkUniqueKeysBelow(root, "", file);
}

std::string Check::describe() const {
  if (!choices.empty()) {
    std::string s = "must be one of:";
    for (const auto& c : choices) s += " " + c;
    return s;
  }
  const bool hasLo = std::isfinite(lo), hasHi = std::isfinite(hi);
  if (hasLo && hasHi)
    return "must be in " + std::string(loOpen ? "(" : "[") + formatNumber(lo) + ", " +
           formatNumber(hi) + (hiOpen ? ")" : "]");
  if (hasLo) return std::string("must be ") + (loOpen ? "> " : ">= ") + formatNumber(lo);
  if (hasHi) return std::string("must be ") + (hiOpen ? "< " : "<= ") + formatNumber(hi);
  return "any value";
}

// ---------------------------------------------------------------------------------------------
// Overrides

Override parseOverride(const std::string& s) {
  Override o;
  o.text = printable(s);  // what messages show
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    fail("--set " + o.text + ": expected key.path=value (e.g. --set shac.iterations=500)");
  o.path = s.substr(0, eq);
  const bool control = std::any_of(o.path.begin(), o.path.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  std::string part;
  std::istringstream parts(o.path);
  while (std::getline(parts, part, '.'))
    if (control || part.empty() || part.find_first_of(" \t[]{}:,") != std::string::npos)
      fail("--set " + o.text + ": '" + printable(o.path) +
           "' is not a key path (keys separated by '.')");
  if (o.path.back() == '.') fail("--set " + o.text + ": '" + o.path + "' ends with '.'");
  try {
    o.value = YAML::Load(s.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    fail("--set " + o.text + ": the value is not valid YAML (" + e.msg + ")");
  }
  checkYamlTree(o.value, "--set " + o.text, false);
  return o;
}

void applyOverride(YAML::Node root, const Override& o, size_t skip) {
  std::vector<std::string> keys;
  std::string part;
  std::istringstream parts(o.path);
  while (std::getline(parts, part, '.')) keys.push_back(part);
  YAML::Node cur;
  cur.reset(root);
  std::string at;
  for (size_t i = skip; i + 1 < keys.size(); ++i) {
    at += (at.empty() ? "" : ".") + keys[i];
    YAML::Node next = cur[keys[i]];
    if (next && !next.IsMap() && !next.IsNull())
      fail(o.label() + ": '" + at + "' is a value, not a section");
    if (!next || next.IsNull()) cur[keys[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node child = cur[keys[i]];
    cur.reset(child);
  }
  // A copy: assigning the node itself would make both names one node (yaml-cpp assigns by
  // reference), and a later override of one would change the other.
  cur[keys.back()] = YAML::Clone(o.value);
}

std::string Source::where(const std::string& path, const YAML::Node& n) const {
  for (const auto& o : sets)
    if (o.path == path || path.rfind(o.path + ".", 0) == 0 || o.path.rfind(path + ".", 0) == 0)
      return o.label();
  return located(file, n);
}

// ---------------------------------------------------------------------------------------------
// Reader

Reader::Reader(const YAML::Node& node, std::string path, const Source& src, const YAML::Node& at,
               ReadOptions options)
    : node_(node), path_(std::move(path)), src_(src), at_(at), options_(options) {
  if (node_ && !node_.IsMap() && !node_.IsNull())
    fail(src_.where(path_, node_) + ": " + (path_.empty() ? "" : path_ + ": ") +
         "expected a section (key: value lines), got '" + shortText(node_) + "'");
}

YAML::Node Reader::take(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  if (!node_ || !node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  return node_[key];
}

YAML::Node Reader::required(const std::string& key) {
  const YAML::Node n = take(key);
  if (!n && options_.requireAll) {
    const std::string p = keyPath(key);
    fail(located(src_.file, node_ && node_.IsMap() ? at_ : node_) + ": " + p + ": missing key");
  }
  return n;
}

YAML::Node Reader::keyNode(const std::string& key) const {
  if (node_ && node_.IsMap())
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->first;
  return YAML::Node(YAML::NodeType::Undefined);
}

void Reader::finish() const {
  if (!node_ || !node_.IsMap()) return;
  std::vector<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = keyName(it->first, src_.file);
    const std::string p = keyPath(k);
    if (std::find(seen.begin(), seen.end(), k) != seen.end())
      fail(src_.where(p, it->first) + ": '" + p + "' given twice");
    seen.push_back(k);
    if (!options_.ignoreUnknown && std::find(known_.begin(), known_.end(), k) == known_.end())
      fail(src_.where(p, it->first) + ": unknown key '" + p + "'" + didYouMean(k, known_));
  }
}

void Reader::check(bool ok, const std::string& key, const std::string& msg) const {
  if (ok) return;
  const std::string p = key.empty() ? path_ : keyPath(key);
  const YAML::Node n = key.empty() || !has(key) ? at_ : node_[key];
  fail(src_.where(p, n) + ": " + (p.empty() ? "" : p + ": ") + msg);
}

void Reader::bad(const YAML::Node& n, const std::string& path, const std::string& what) const {
  fail(src_.where(path, n) + ": " + path + ": " + what);
}

void Reader::read(const YAML::Node& n, const std::string& p, double& v, const Check& c) const {
  v = as<double>(n, p, "a number");
  if (std::isnan(v) || (std::isinf(v) && !c.infinite))
    bad(n, p, "expected a finite number, got '" + shortText(n) + "'");
  if (!c.accepts(v)) bad(n, p, formatNumber(v) + " is out of range: " + c.describe());
}

void Reader::read(const YAML::Node& n, const std::string& p, int& v, const Check& c) const {
  v = as<int>(n, p, "an integer");
  if (!c.accepts(v)) bad(n, p, std::to_string(v) + " is out of range: " + c.describe());
}

void Reader::read(const YAML::Node& n, const std::string& p, std::int64_t& v,
                  const Check& c) const {
  v = as<long long>(n, p, "an integer");
  if (!c.accepts(static_cast<double>(v)))
    bad(n, p, std::to_string(v) + " is out of range: " + c.describe());
}

void Reader::read(const YAML::Node& n, const std::string& p, bool& v, const Check&) const {
  v = as<bool>(n, p, "true or false");
}

void Reader::read(const YAML::Node& n, const std::string& p, std::string& v, const Check& c) const {
  v = as<std::string>(n, p, "a string");
  if (!c.choices.empty() && std::find(c.choices.begin(), c.choices.end(), v) == c.choices.end()) {
    std::string all;
    for (const auto& k : c.choices) all += (all.empty() ? "" : ", ") + k;
    bad(n, p, "'" + shortText(n) + "' is not one of: " + all + didYouMean(v, c.choices));
  }
}

void Reader::read(const YAML::Node& n, const std::string& p, Range& r, const Check& c) const {
  if (n.IsScalar()) {
    read(n, p, r.lo, c);
    r.hi = r.lo;
  } else if (n.IsSequence() && n.size() == 2) {
    read(n[0], p + "[0]", r.lo, c);
    read(n[1], p + "[1]", r.hi, c);
  } else {
    bad(n, p, "expected [low, high] or a number, got '" + shortText(n) + "'");
  }
  if (r.lo > r.hi)
    bad(n, p, "low > high (" + formatNumber(r.lo) + " > " + formatNumber(r.hi) + ")");
}

void Reader::read(const YAML::Node& n, const std::string& p,
                  std::map<std::string, std::vector<double>>& v, const Check& c) const {
  if (!n.IsMap())
    bad(n, p, "expected a map of names to lists of numbers, got '" + shortText(n) + "'");
  v.clear();
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string k = keyName(it->first, src_.file);
    if (v.count(k)) bad(it->first, p, "'" + k + "' given twice");
    Check entries = c;
    entries.size = it->second.IsScalar() ? 1 : -1;  // one number without brackets
    read(it->second, p + "." + k, v[k], entries);
  }
}

// ---------------------------------------------------------------------------------------------
// Writer

// Always with a '.' or an exponent's ".0" (20.0, 1.0e-06): YAML 1.1 readers (PyYAML) see a float.
std::string text(double v) {
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  if (std::isnan(v)) return ".nan";
  std::string s = formatNumber(v);
  if (s.find('.') == std::string::npos) {
    const size_t e = s.find('e');
    s.insert(e == std::string::npos ? s.size() : e, ".0");
  }
  return s;
}
std::string text(int v) {
  return std::to_string(v);
}
std::string text(std::int64_t v) {
  return std::to_string(v);
}
std::string text(bool v) {
  return v ? "true" : "false";
}
// JSON's double-quoted string, which YAML reads too: every value the Writer puts is then JSON
// (but for .inf), whatever the string holds.
std::string text(const std::string& v) {
  return json(v);
}
std::string text(const Range& v) {
  return "[" + text(v.lo) + ", " + text(v.hi) + "]";
}
std::string text(const std::map<std::string, std::vector<double>>& v) {
  std::string s = "{";
  for (const auto& [k, x] : v) s += (s.size() > 1 ? ", " : "") + json(k) + ": " + text(x);
  return s + "}";
}

namespace {
// A documentation string as a one-line YAML comment.
std::string comment(std::string doc) {
  std::replace(doc.begin(), doc.end(), '\n', ' ');
  return doc.empty() ? "" : "  # " + doc;
}
}  // namespace

void Writer::line(const std::string& key, const std::string& value, const std::string& doc) {
  out_ << pad_ << key << ": " << value << comment(doc) << "\n";
}

void Writer::nested(const std::string& key, const std::string& doc, const std::string& body) {
  out_ << pad_ << key << ":" << (body.empty() ? " {}" : "") << comment(doc) << "\n" << body;
}

std::string Writer::entry(const std::string& body) const {
  const std::string inner = pad_ + "    ";
  if (body.empty()) return pad_ + "  - {}\n";
  return pad_ + "  - " + body.substr(std::min(body.size(), inner.size()));
}

// ---------------------------------------------------------------------------------------------
// JSON

// Escaped by nlohmann/json; bytes that are not UTF-8 become U+FFFD instead of an error.
std::string json(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
void JsonWriter::member(const std::string& key, const std::string& value) {
  if (!out_.empty()) out_ += depth_ == 0 ? ",\n " : ", ";
  out_ += json(key) + ": " + value;
}

}  // namespace diffloco::config
