// TensorFlow's tensor-bundle checkpoint format (what SaveV2 writes and RestoreV2 reads; a
// SavedModel's `variables/variables.*`), spec/tf-wire.md §8.
//
// A bundle with prefix P is
//   P.index                   a table in LevelDB's format (Debian's libleveldb reads and writes
//                             it), keys sorted bytewise: "" -> BundleHeaderProto, then one key per
//                             tensor name -> BundleEntryProto (dtype, shape, shard, offset, size,
//                             masked CRC32C of the bytes)
//   P.data-00000-of-00001     the tensors' bytes, raw, little-endian, row-major, back to back
//                             (one file per shard; this writer always writes one shard)
//
// Supported element types: every fixed-size dtype a Tensor holds (float, double, half, bfloat16,
// int8..int64, uint8..uint64, bool), and DT_STRING in TF's layout (the elements' lengths as
// varint64s, the masked CRC32C of the lengths, the bytes; the entry's CRC covers all three, each
// length counted as 4 bytes). Partitioned tensors (entries with `slices`) are UNIMPLEMENTED
// with a message that says so.
//
// Errors: a missing file or key is NOT_FOUND; anything inconsistent in the files (a table that
// does not parse, a header or entry that does not decode, an offset/size outside its shard, a
// size that does not match dtype x shape, a shard id >= num_shards, a CRC mismatch) is
// DATA_LOSS naming the file and tensor. I/O failures carry the code of the OS error (NOT_FOUND
// for a missing directory, PERMISSION_DENIED, RESOURCE_EXHAUSTED for a full disk, else INTERNAL)
// and the path. Nothing here aborts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/tensor_bundle.pb.h"
#include "tensorflux/train/file_io.h"

namespace leveldb {
class RandomAccessFile;
class Table;
}  // namespace leveldb

namespace tensorflux {

// "P.index"
std::string BundleIndexFilename(std::string_view prefix);
// "P.data-00003-of-00010"
std::string BundleDataFilename(std::string_view prefix, int shard_id, int num_shards);

// Writes one bundle. Tensors are streamed to a temporary data file as they are added; Finish()
// writes the sorted index and renames both files into place (data first, then the index, so a
// reader never sees an index naming missing data). A writer that is destroyed without Finish()
// removes its temporary files.
class BundleWriter {
 public:
  // Creates the directory of `prefix` when missing, and the temporary data file in it (errors
  // show in status()).
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // The first error, if any; after an error every call returns it.
  const Status& status() const { return status_; }

  // Appends `t` under `key`. INVALID_ARGUMENT for an empty or duplicate key; UNIMPLEMENTED for
  // dtypes other than the fixed-size ones and string.
  Status Add(std::string_view key, const Tensor& t);
  // Writes P.index and renames the files into place. Call once.
  Status Finish();

 private:
  Status AppendBytes(std::string_view key, BundleEntryProto entry, std::string_view bytes);

  std::string prefix_;
  std::unique_ptr<AtomicFile> data_;
  std::map<std::string, BundleEntryProto, std::less<>> entries_;
  Status status_;
  bool finished_ = false;
};

// Reads one bundle: the index is loaded when opened, tensors are read one at a time on demand.
// Safe to use from one thread at a time.
class BundleReader {
 public:
  // Opens P.index and checks its header (num_shards >= 1, little-endian, version readable).
  // NOT_FOUND when P.index does not exist; DATA_LOSS when it is not a valid bundle index;
  // UNIMPLEMENTED for a big-endian bundle or one needing a newer reader.
  static StatusOr<std::unique_ptr<BundleReader>> Open(std::string prefix);
  ~BundleReader();

  const std::string& prefix() const { return prefix_; }
  const BundleHeaderProto& header() const { return header_; }

  // The entry of `key` as stored (not validated against the data). NOT_FOUND naming the key and
  // the bundle when absent; DATA_LOSS when the entry does not decode.
  StatusOr<BundleEntryProto> LookupEntry(std::string_view key) const;
  // The tensor `key`: reads exactly its bytes, validates the entry (dtype, shape, shard, range,
  // size == elements x element size) and the CRC.
  StatusOr<Tensor> Lookup(std::string_view key) const;
  // Checks everything about `entry` but its bytes: dtype, shape, size == elements x element
  // size, shard id, and that the range lies inside the shard (opening it). Returns the shape.
  StatusOr<TensorShape> CheckEntry(std::string_view key, const BundleEntryProto& entry) const;

  // Every tensor key with its entry, in key order.
  Status ForEachEntry(
      const std::function<Status(const std::string& key, const BundleEntryProto& entry)>& fn) const;

 private:
  BundleReader() = default;
  StatusOr<int> ShardFd(int shard_id) const;
  // Reads the entry's bytes into `dst` (entry.size() bytes) and checks the CRC (and, for bool,
  // that every byte is 0 or 1). Call after CheckEntry.
  Status ReadChecked(std::string_view key, const BundleEntryProto& entry, char* dst) const;
  std::string Where(std::string_view key) const;  // "checkpoint 'P', tensor 'key'"

  std::string prefix_;
  BundleHeaderProto header_;
  std::unique_ptr<leveldb::RandomAccessFile> index_file_;
  std::unique_ptr<leveldb::Table> table_;
  mutable std::vector<int> shard_fds_;       // -1 until opened
  mutable std::vector<int64_t> shard_sizes_;
};

// MergeV2Checkpoints: merges the bundles `src_prefixes` into one at `dst_prefix`. Every source
// is opened and every entry checked first; then the sources' data files are renamed (not copied)
// to dst's shard names in order (source k's shards follow those of sources 0..k-1), one index is
// written with the shard ids moved accordingly, and the sources' index files are deleted.
// INVALID_ARGUMENT for no sources, a key held by two sources, or dst equal to a source;
// `allow_missing` skips sources whose index does not exist (INVALID_ARGUMENT otherwise, TF's
// "allow_missing_files was set to false and P did not exist.").
Status MergeBundles(const std::vector<std::string>& src_prefixes, const std::string& dst_prefix,
                    bool allow_missing = false);

}  // namespace tensorflux
