#include "io/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

#include "io/read_file.h"

namespace diffloco::io {

namespace {

// The zip format's little-endian records (PKWARE APPNOTE 6.3): signatures and fixed sizes.
constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50,
                   kEndOfCentralDirectory = 0x06054b50, kZip64End = 0x06064b50,
                   kZip64Locator = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndSize = 22,
                 kZip64LocatorSize = 20, kZip64EndSize = 56;

struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bounds-checked little-endian reads from the archive's bytes.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  uint64_t size() const { return b_.size(); }
  uint64_t get(uint64_t at, int bytes, const char* what) const {
    if (at > b_.size() || b_.size() - at < static_cast<uint64_t>(bytes))
      throw Bad(std::string(what) + " lies past the end of the file");
    uint64_t v = 0;
    for (int i = bytes; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b_[at + i]);
    return v;
  }
  std::string_view span(uint64_t at, uint64_t n, const char* what) const {
    if (at > b_.size() || b_.size() - at < n)
      throw Bad(std::string(what) + " lies past the end of the file");
    return b_.substr(at, n);
  }

 private:
  std::string_view b_;
};

uint32_t crc32Of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes at most 4 GB per call.
  for (size_t at = 0; at < data.size();) {
    const auto n =
        static_cast<uInt>(std::min<size_t>(data.size() - at, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + at), n);
    at += n;
  }
  return static_cast<uint32_t>(crc);
}

// The CRC-32 of a raw deflate stream inflated in chunks (no buffer of the claimed size: a small
// record claiming gigabytes costs nothing), which must produce exactly `size` bytes.
uint32_t inflatedCrc32(std::string_view in, uint64_t size, const std::string& record) {
  if (in.size() > std::numeric_limits<uInt>::max())
    throw Bad("record '" + record + "' is too large to check");
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw Bad("zlib could not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::array<Bytef, 65536> chunk;
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t produced = 0;
  int rc = Z_OK;
  while (rc == Z_OK && produced <= size) {
    z.next_out = chunk.data();
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    const uInt n = static_cast<uInt>(chunk.size()) - z.avail_out;
    crc = crc32(crc, chunk.data(), n);
    produced += n;
    if (rc == Z_BUF_ERROR && n > 0) rc = Z_OK;  // output was full: go on
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != size)
    throw Bad("record '" + record + "' does not inflate to its " + std::to_string(size) + " bytes");
  return static_cast<uint32_t>(crc);
}

// The end-of-central-directory record: the last one whose comment reaches the end of the file.
uint64_t findEndOfCentralDirectory(const Reader& r) {
  if (r.size() < kEndSize) throw Bad("shorter than a zip directory");
  const uint64_t lowest = r.size() - std::min<uint64_t>(r.size(), kEndSize + 0xffff);
  for (uint64_t at = r.size() - kEndSize + 1; at-- > lowest;) {
    if (r.get(at, 4, "") == kEndOfCentralDirectory &&
        at + kEndSize + r.get(at + 20, 2, "") == r.size())
      return at;
  }
  throw Bad("no end-of-central-directory record");
}

// Where the central directory lies and how many records it holds.
struct Directory {
  uint64_t entries = 0, offset = 0;
  uint64_t end = 0;  // where the central directory must end
};

// The directory the end record at `end` (or the zip64 record before it) describes, checked
// against the file.
Directory readDirectory(const Reader& r, uint64_t end) {
  uint64_t disk = r.get(end + 4, 2, "directory"), cdDisk = r.get(end + 6, 2, "directory");
  uint64_t entriesHere = r.get(end + 8, 2, "directory"), entries = r.get(end + 10, 2, "directory");
  uint64_t cdSize = r.get(end + 12, 4, "directory"), cdOffset = r.get(end + 16, 4, "directory");
  uint64_t cdEnd = end;  // where the central directory must end
  const bool zip64 =
      end >= kZip64LocatorSize && r.get(end - kZip64LocatorSize, 4, "") == kZip64Locator;
  if (zip64) {
    const uint64_t loc = end - kZip64LocatorSize;
    const uint64_t at = r.get(loc + 8, 8, "zip64 locator");
    if (r.get(loc + 4, 4, "zip64 locator") != 0 || r.get(loc + 16, 4, "zip64 locator") > 1)
      throw Bad("a multi-disk archive");
    if (at >= loc || loc - at < kZip64EndSize || r.get(at, 4, "zip64 directory") != kZip64End)
      throw Bad("the zip64 locator does not point at a zip64 directory record");
    disk = r.get(at + 16, 4, "zip64 directory");
    cdDisk = r.get(at + 20, 4, "zip64 directory");
    entriesHere = r.get(at + 24, 8, "zip64 directory");
    entries = r.get(at + 32, 8, "zip64 directory");
    cdSize = r.get(at + 40, 8, "zip64 directory");
    cdOffset = r.get(at + 48, 8, "zip64 directory");
    cdEnd = at;
  }
  if (disk != 0 || cdDisk != 0 || entriesHere != entries) throw Bad("a multi-disk archive");
  if (cdOffset > cdEnd || cdEnd - cdOffset != cdSize)
    throw Bad("the central directory's size and offset do not match the file");
  if (entries == 0) throw Bad("no records");
  if (entries > cdSize / kCentralHeaderSize) throw Bad("more records than the directory can hold");
  return {entries, cdOffset, cdEnd};
}

// The zip64 extra field holds, in this order, whichever values are 0xffffffff (0xffff) above.
// False where the entry needs them and has none.
bool readZip64Extra(std::string_view extra, uint64_t& usize, uint64_t& csize, uint64_t& offset,
                    uint64_t& startDisk) {
  bool needs64 =
      usize == 0xffffffff || csize == 0xffffffff || offset == 0xffffffff || startDisk == 0xffff;
  for (uint64_t e = 0; e + 4 <= extra.size();) {
    const Reader x(extra);
    const uint64_t id = x.get(e, 2, "an extra field"), len = x.get(e + 2, 2, "an extra field");
    const Reader body(x.span(e + 4, len, "an extra field"));
    if (id == 0x0001 && needs64) {
      uint64_t p = 0;
      auto next = [&](uint64_t& v, int bytes) {
        v = body.get(p, bytes, "a zip64 extra field");
        p += bytes;
      };
      if (usize == 0xffffffff) next(usize, 8);
      if (csize == 0xffffffff) next(csize, 8);
      if (offset == 0xffffffff) next(offset, 8);
      if (startDisk == 0xffff) next(startDisk, 4);
      needs64 = false;
    }
    e += 4 + len;
  }
  return !needs64;
}

// A directory entry as checkRecord needs it, its zip64 sizes applied.
struct Entry {
  uint64_t method = 0, crc = 0, csize = 0, usize = 0, offset = 0;
  uint64_t length = 0;  // of the directory entry, its name, extra field and comment included
  std::string_view name;
  std::string shown;  // the name as errors show it
};

// Directory entry `i`, at `at`: its signature, a name new to `names`, and nothing this reader
// does not read (multi-disk, encryption, other compression methods).
Entry readEntry(const Reader& r, uint64_t at, uint64_t i, std::set<std::string_view>& names) {
  if (r.get(at, 4, "a directory entry") != kCentralHeader)
    throw Bad("directory entry " + std::to_string(i) + " has no signature");
  const uint64_t flags = r.get(at + 8, 2, "a directory entry");
  const uint64_t method = r.get(at + 10, 2, "a directory entry");
  const uint64_t crc = r.get(at + 16, 4, "a directory entry");
  uint64_t csize = r.get(at + 20, 4, "a directory entry");
  uint64_t usize = r.get(at + 24, 4, "a directory entry");
  const uint64_t nameLen = r.get(at + 28, 2, "a directory entry");
  const uint64_t extraLen = r.get(at + 30, 2, "a directory entry");
  const uint64_t commentLen = r.get(at + 32, 2, "a directory entry");
  uint64_t startDisk = r.get(at + 34, 2, "a directory entry");
  uint64_t offset = r.get(at + 42, 4, "a directory entry");
  const std::string_view name = r.span(at + kCentralHeaderSize, nameLen, "a record name");
  const std::string shown(name.substr(0, 200));
  if (name.empty()) throw Bad("directory entry " + std::to_string(i) + " has no name");
  if (!names.insert(name).second) throw Bad("record '" + shown + "' appears twice");
  const std::string_view extra =
      r.span(at + kCentralHeaderSize + nameLen, extraLen, "a directory entry's extra field");
  if (!readZip64Extra(extra, usize, csize, offset, startDisk))
    throw Bad("record '" + shown + "' lacks its zip64 sizes");
  if (startDisk != 0) throw Bad("a multi-disk archive");
  if (flags & 0x1) throw Bad("record '" + shown + "' is encrypted");
  if (method != 0 && method != 8)
    throw Bad("record '" + shown + "' uses compression method " + std::to_string(method) +
              " (stored and deflate are read)");
  const uint64_t length = kCentralHeaderSize + nameLen + extraLen + commentLen;
  return {method, crc, csize, usize, offset, length, name, shown};
}

// The record's local header must repeat its name; its data must end before the directory.
void checkRecord(const Reader& r, const Entry& e, uint64_t cdOffset) {
  if (r.get(e.offset, 4, "a record's header") != kLocalHeader)
    throw Bad("record '" + e.shown + "' has no local header at offset " + std::to_string(e.offset));
  const uint64_t localName = r.get(e.offset + 26, 2, "a record's header");
  const uint64_t localExtra = r.get(e.offset + 28, 2, "a record's header");
  if (r.span(e.offset + kLocalHeaderSize, localName, "a record's name") != e.name)
    throw Bad("record '" + e.shown + "': its local header names another record");
  const uint64_t data = e.offset + kLocalHeaderSize + localName + localExtra;
  if (data > cdOffset || cdOffset - data < e.csize)
    throw Bad("record '" + e.shown + "' overlaps the central directory");
  const std::string_view stored = r.span(data, e.csize, "a record's data");
  if (e.method == 0) {
    if (e.csize != e.usize) throw Bad("stored record '" + e.shown + "' has two sizes");
    if (crc32Of(stored) != e.crc) throw Bad("record '" + e.shown + "' fails its CRC-32 check");
  } else if (inflatedCrc32(stored, e.usize, e.shown) != e.crc) {
    throw Bad("record '" + e.shown + "' fails its CRC-32 check");
  }
}

void check(std::string_view bytes) {
  const Reader r(bytes);
  const Directory dir = readDirectory(r, findEndOfCentralDirectory(r));
  std::set<std::string_view> names;
  uint64_t at = dir.offset;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    const Entry e = readEntry(r, at, i, names);
    checkRecord(r, e, dir.offset);
    at += e.length;
  }
  if (at != dir.end) throw Bad("the central directory holds more than its records");
}

}  // namespace

void checkZipArchive(const std::string& name, std::string_view bytes) {
  try {
    check(bytes);
  } catch (const Bad& e) {
    throw std::runtime_error(name + ": not a valid archive (" + e.what() + ")");
  }
}

std::string readCheckedZipArchive(const std::string& path) {
  std::string bytes = readFile(path);
  checkZipArchive(path, bytes);
  return bytes;
}

}  // namespace diffloco::io
