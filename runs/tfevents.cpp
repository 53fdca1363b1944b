#include "runs/tfevents.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace diffloco::runs {

namespace {

std::array<std::uint32_t, 256> crcTable() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected poly
    t[i] = c;
  }
  return t;
}

// Protobuf wire format: varints, tags, fixed-width little-endian fields.
void varint(std::string& s, std::uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}
void tag(std::string& s, int field, int wire) { varint(s, (static_cast<std::uint64_t>(field) << 3) | wire); }
template <class T>
void fixed(std::string& s, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // x86 and ARM are little endian, as the format
  s.append(b, sizeof(T));
}
void bytes(std::string& s, int field, const std::string& v) {
  tag(s, field, 2);
  varint(s, v.size());
  s += v;
}

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string eventHeader(double wallTime, std::int64_t step) {
  std::string e;
  tag(e, 1, 1);
  fixed(e, wallTime);
  tag(e, 2, 0);
  varint(e, static_cast<std::uint64_t>(step));
  return e;
}

}  // namespace

std::uint32_t crc32c(const void* data, size_t n) {
  static const auto table = crcTable();
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::uint32_t maskedCrc32c(const void* data, size_t n) {
  const std::uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

EventWriter::EventWriter(const std::string& dir) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  path_ = dir + "/events.out.tfevents." +
          std::to_string(static_cast<long long>(now())) + "." + host;
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw std::runtime_error(path_ + ": cannot write the TensorBoard event file");
  std::string e = eventHeader(now(), 0);
  bytes(e, 3, "brain.Event:2");
  record(e);
  out_.flush();
}

void EventWriter::scalars(std::int64_t step, const std::map<std::string, double>& values,
                          double wallTime) {
  std::string summary;
  for (const auto& [name, v] : values) {
    std::string value;
    bytes(value, 1, name);
    tag(value, 2, 5);
    fixed(value, static_cast<float>(v));
    bytes(summary, 1, value);
  }
  std::string e = eventHeader(wallTime < 0 ? now() : wallTime, step);
  bytes(e, 5, summary);
  record(e);
}

void EventWriter::record(const std::string& data) {
  std::string r;
  const std::uint64_t len = data.size();
  fixed(r, len);
  fixed(r, maskedCrc32c(&len, sizeof len));
  r += data;
  fixed(r, maskedCrc32c(data.data(), data.size()));
  out_.write(r.data(), static_cast<std::streamsize>(r.size()));
}

// ---------------------------------------------------------------------------------------------
// Reader

namespace {

struct Cursor {
  const std::string& s;
  size_t i, end;
  const std::string& file;
  [[noreturn]] void bad(const std::string& what) const {
    throw std::runtime_error(file + ": malformed event (" + what + ")");
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= end) bad("truncated varint");
      const auto b = static_cast<unsigned char>(s[i++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    bad("varint too long");
  }
  template <class T>
  T fixed() {
    if (i + sizeof(T) > end) bad("truncated fixed field");
    T v;
    std::memcpy(&v, s.data() + i, sizeof(T));
    i += sizeof(T);
    return v;
  }
  Cursor sub() {
    const std::uint64_t n = varint();
    if (i + n > end) bad("truncated length-delimited field");
    Cursor c{s, i, i + n, file};
    i += n;
    return c;
  }
  void skip(int wire) {
    if (wire == 0) varint();
    else if (wire == 1) fixed<std::uint64_t>();
    else if (wire == 5) fixed<std::uint32_t>();
    else if (wire == 2) sub();
    else bad("wire type " + std::to_string(wire));
  }
};

}  // namespace

EventFile readEventFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EventFile f;
  size_t pos = 0;
  while (pos < all.size()) {
    if (pos + 12 > all.size()) throw std::runtime_error(path + ": truncated record header");
    std::uint64_t len;
    std::uint32_t lenCrc, dataCrc;
    std::memcpy(&len, all.data() + pos, 8);
    std::memcpy(&lenCrc, all.data() + pos + 8, 4);
    if (lenCrc != maskedCrc32c(all.data() + pos, 8))
      throw std::runtime_error(path + ": bad length CRC at byte " + std::to_string(pos));
    if (pos + 12 + len + 4 > all.size()) throw std::runtime_error(path + ": truncated record");
    std::memcpy(&dataCrc, all.data() + pos + 12 + len, 4);
    if (dataCrc != maskedCrc32c(all.data() + pos + 12, len))
      throw std::runtime_error(path + ": bad data CRC at byte " + std::to_string(pos));
    Cursor ev{all, pos + 12, pos + 12 + len, path};
    double wall = 0;
    std::int64_t step = 0;
    std::vector<ScalarEvent> values;
    while (ev.i < ev.end) {
      const std::uint64_t key = ev.varint();
      const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
      if (field == 1 && wire == 1) {
        wall = ev.fixed<double>();
      } else if (field == 2 && wire == 0) {
        step = static_cast<std::int64_t>(ev.varint());
      } else if (field == 3 && wire == 2) {
        Cursor c = ev.sub();
        f.fileVersion = all.substr(c.i, c.end - c.i);
      } else if (field == 5 && wire == 2) {
        Cursor summary = ev.sub();
        while (summary.i < summary.end) {
          const std::uint64_t k = summary.varint();
          if ((k >> 3) != 1 || (k & 7) != 2) {
            summary.skip(static_cast<int>(k & 7));
            continue;
          }
          Cursor value = summary.sub();
          ScalarEvent se;
          while (value.i < value.end) {
            const std::uint64_t vk = value.varint();
            if (vk == ((1 << 3) | 2)) {
              Cursor t = value.sub();
              se.tag = all.substr(t.i, t.end - t.i);
            } else if (vk == ((2 << 3) | 5)) {
              se.value = value.fixed<float>();
            } else {
              value.skip(static_cast<int>(vk & 7));
            }
          }
          values.push_back(se);
        }
      } else {
        ev.skip(wire);
      }
    }
    for (auto& v : values) {
      v.wallTime = wall;
      v.step = step;
      f.scalars.push_back(v);
    }
    ++f.records;
    pos += 12 + len + 4;
  }
  return f;
}

}  // namespace diffloco::runs
