// io::checkZipArchive on archives LibTorch wrote (zip64, stored records) and on archives built
// here (plain zip, stored and deflated records): valid ones pass; every truncation, every byte
// flipped inside a record's data, edited directory fields and the fuzz input that crashed
// LibTorch's reader are errors naming the file; a record that claims gigabytes is refused without
// allocating them.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/read_file.h"
#include "io/zip_archive.h"

using diffloco::io::checkZipArchive;

namespace {

void put(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

struct Record {
  std::string name, data;
  bool deflate = false;
};

std::string deflateRaw(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A plain (not zip64) archive; claimedSize replaces the uncompressed size of every record if set.
std::string zipOf(const std::vector<Record>& records, int64_t claimedSize = -1) {
  std::string out, dir;
  for (const auto& r : records) {
    const std::string body = r.deflate ? deflateRaw(r.data) : r.data;
    const auto crc = crc32(0, reinterpret_cast<const Bytef*>(r.data.data()), r.data.size());
    const uint64_t usize = claimedSize >= 0 ? claimedSize : r.data.size();
    const uint64_t offset = out.size();
    for (std::string* h : {&out, &dir}) {
      const bool central = h == &dir;
      put(*h, central ? 0x02014b50 : 0x04034b50, 4);
      if (central) put(*h, 20, 2);  // version made by
      put(*h, 20, 2);               // version needed
      put(*h, 0, 2);                // flags
      put(*h, r.deflate ? 8 : 0, 2);
      put(*h, 0, 4);  // time, date
      put(*h, crc, 4);
      put(*h, body.size(), 4);
      put(*h, usize, 4);
      put(*h, r.name.size(), 2);
      put(*h, 0, 2);  // extra
      if (central) {
        put(*h, 0, 2);  // comment
        put(*h, 0, 2);  // disk
        put(*h, 0, 2);  // internal attributes
        put(*h, 0, 4);  // external attributes
        put(*h, offset, 4);
      }
      *h += r.name;
    }
    out += body;
  }
  const uint64_t cdOffset = out.size();
  out += dir;
  put(out, 0x06054b50, 4);
  put(out, 0, 4);  // disks
  put(out, records.size(), 2);
  put(out, records.size(), 2);
  put(out, dir.size(), 4);
  put(out, cdOffset, 4);
  put(out, 0, 2);
  return out;
}

std::string errorOf(const std::string& bytes) {
  try {
    checkZipArchive("x.pt", bytes);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ZipArchive, LibTorchsFilesPass) {
  const std::string bytes = diffloco::io::readFile(DIFFLOCO_PRETRAINED_POLICY);
  EXPECT_NO_THROW(checkZipArchive("policy", bytes));
  EXPECT_EQ(diffloco::io::readCheckedZipArchive(DIFFLOCO_PRETRAINED_POLICY), bytes);
}

TEST(ZipArchive, StoredAndDeflatedRecordsPass) {
  const std::string text(5000, 'a');
  EXPECT_EQ(errorOf(zipOf({{"a/data.pkl", "0123456789"}, {"a/code.py", text, true}})), "");
}

TEST(ZipArchive, EveryTruncationIsAnErrorNamingTheFile) {
  const std::string bytes = diffloco::io::readFile(DIFFLOCO_PRETRAINED_POLICY);
  for (size_t n = 0; n < bytes.size(); n += (n < 200 || bytes.size() - n < 400) ? 1 : 97) {
    const std::string e = errorOf(bytes.substr(0, n));
    ASSERT_EQ(e.rfind("x.pt: not a valid archive (", 0), 0u) << n << " bytes: '" << e << "'";
  }
}

TEST(ZipArchive, EveryByteFlippedInsideARecordIsCaught) {
  const std::vector<Record> records = {{"a/data.pkl", std::string(300, 'p')},
                                       {"a/code/__torch__.py", std::string(400, 'c'), true}};
  const std::string bytes = zipOf(records);
  // The bytes no reader needs: per local header its version, flags, method, time, date, CRC and
  // sizes (the directory's are read; with a data descriptor they may be zero), per directory
  // entry its versions, flags other than encryption, time, date and attributes; and the deflate
  // stream's last byte (its padding bits are not part of the data).
  std::vector<bool> unread(bytes.size(), false);
  size_t at = 0, dir = 0;
  std::vector<size_t> local;
  for (const auto& r : records) {
    local.push_back(at);
    for (size_t k = 4; k < 26; ++k) unread[at + k] = true;
    at += 30 + r.name.size() + (r.deflate ? deflateRaw(r.data).size() : r.data.size());
    if (r.deflate) unread[at - 1] = true;
  }
  dir = at;
  for (const auto& r : records) {
    for (size_t k : {4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 36, 37, 38, 39, 40, 41})
      unread[dir + k] = true;
    dir += 46 + r.name.size();
  }
  int caught = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0x5a);  // 0x5a leaves the encryption bit (0x01) alone
    const std::string e = errorOf(b);
    if (unread[i]) continue;  // harmless either way
    ASSERT_EQ(e.rfind("x.pt: not a valid archive (", 0), 0u) << "byte " << i << ": '" << e << "'";
    ++caught;
  }
  EXPECT_GT(caught, 450);
  // A flip inside the stored record's data: its CRC.
  std::string b = bytes;
  b[local[0] + 30 + 10 + 150] ^= 1;
  EXPECT_NE(errorOf(b).find("record 'a/data.pkl' fails its CRC-32 check"), std::string::npos)
      << errorOf(b);
}

TEST(ZipArchive, TheInputThatCrashedLibTorchIsRefused) {
  const std::string bytes =
      diffloco::io::readFile(DIFFLOCO_FUZZ_REGRESSIONS "/policy_file_libtorch_segv.pt");
  const std::string e = errorOf(bytes);
  EXPECT_EQ(e.rfind("x.pt: not a valid archive (record '", 0), 0u) << e;
}

TEST(ZipArchive, ARecordClaimingGigabytesIsRefusedWithoutAllocatingThem) {
  // 4 GB - 1 claimed for 2000 bytes of deflate: inflating stops past the real size.
  const std::string bytes = zipOf({{"a/b", std::string(2000, 'z'), true}}, 0xfffffffe);
  EXPECT_NE(errorOf(bytes).find("does not inflate to its 4294967294 bytes"), std::string::npos)
      << errorOf(bytes);
  const std::string stored = zipOf({{"a/b", "abc"}}, 0xfffffffe);
  EXPECT_NE(errorOf(stored).find("has two sizes"), std::string::npos) << errorOf(stored);
}

TEST(ZipArchive, DirectoryEditsAreErrors) {
  const std::string good = zipOf({{"a/x", "1"}, {"a/y", "22"}});
  EXPECT_NE(errorOf(zipOf({{"a/x", "1"}, {"a/x", "2"}})).find("appears twice"), std::string::npos);
  EXPECT_NE(errorOf("").find("shorter than a zip directory"), std::string::npos);
  EXPECT_NE(errorOf(std::string(100, '\0')).find("no end-of-central-directory"), std::string::npos);
  std::string b = good;
  b[good.size() - 12] = 3;  // 3 records in the directory's count, 2 written
  EXPECT_NE(errorOf(b), "");
  b = good;
  b[8] = 99;  // compression method of the first local header: the directory's value is read
  EXPECT_EQ(errorOf(b), "");
  const size_t dir = good.size() - 22 - 2 * (46 + 3);
  b = good;
  b[dir + 10] = 12;  // the directory's method for a/x: bzip2
  EXPECT_NE(errorOf(b).find("compression method 12"), std::string::npos) << errorOf(b);
  b = good;
  b[dir + 8] = 1;  // encrypted
  EXPECT_NE(errorOf(b).find("is encrypted"), std::string::npos) << errorOf(b);
}
