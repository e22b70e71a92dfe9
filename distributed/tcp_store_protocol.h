// distributed/tcp_store_protocol.h — the TCP store's wire format, shared by client and server.
//
// Every message, each way, is one frame: an 8-byte length, then that many bytes of payload.
// A request's payload is a command byte and its arguments; a reply's payload is a status
// byte and its results. Integers are fixed-width little-endian, written byte by byte so the
// format is the same on any host; strings and byte values are an int64 length then the
// bytes; a key list is an int64 count then the keys. Invariant: every request gets exactly
// one reply frame, in order (a client has one request in flight per connection).
//
//   request                                      reply (after the status byte OK)
//   SET           key, value                     -
//   GET           key, timeout_ms                value        (or TIMED_OUT, missing keys)
//   ADD           key, int64 delta               int64 new value
//   COMPARE_SET   key, expected, desired         value afterwards
//   DELETE_KEY    key                            uint8 existed
//   CHECK         keys                           uint8 all exist
//   WAIT          keys, timeout_ms               -            (or TIMED_OUT, missing keys)
//   NUM_KEYS      -                              int64
//   PING          -                              -
//   ON_DISCONNECT key, value                     -   (the server sets key=value when this
//                                                     connection closes)
//   any           ...                            (or ERROR, message)
//
// GET and WAIT carry their timeout to the server, which answers TIMED_OUT at the deadline:
// the reply still comes, so the connection stays in step and the store stays usable after a
// timeout. A timeout_ms below zero waits forever.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glass::distributed::protocol {

enum class Command : uint8_t {
  SET = 1,
  GET,
  ADD,
  COMPARE_SET,
  DELETE_KEY,
  CHECK,
  WAIT,
  NUM_KEYS,
  PING,
  ON_DISCONNECT,
};
const char* to_string(Command command);

enum class Status : uint8_t { OK = 0, TIMED_OUT = 1, ERROR = 2 };

inline constexpr size_t kFrameHeaderBytes = 8;
// A frame larger than this is a corrupt stream or not our protocol (no rendezvous value is
// near it); the server drops such a connection instead of allocating.
inline constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;

// Builds one frame: the header is filled in by frame().
class Writer {
 public:
  Writer() : buf_(kFrameHeaderBytes, 0) {}
  Writer& u8(uint8_t v) {
    buf_.push_back(v);
    return *this;
  }
  Writer& i64(int64_t v) {
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(uint64_t(v) >> (8 * i)));
    return *this;
  }
  Writer& bytes(const void* data, size_t size) {
    i64(static_cast<int64_t>(size));
    const auto* p = static_cast<const uint8_t*>(data);
    buf_.insert(buf_.end(), p, p + size);
    return *this;
  }
  Writer& bytes(const std::vector<uint8_t>& v) { return bytes(v.data(), v.size()); }
  Writer& str(const std::string& s) { return bytes(s.data(), s.size()); }
  Writer& strs(const std::vector<std::string>& keys) {
    i64(static_cast<int64_t>(keys.size()));
    for (const std::string& key : keys) str(key);
    return *this;
  }
  // The finished frame: the payload's length written into the header.
  std::vector<uint8_t> frame() && {
    uint64_t size = buf_.size() - kFrameHeaderBytes;
    for (size_t i = 0; i < kFrameHeaderBytes; ++i) buf_[i] = static_cast<uint8_t>(size >> (8 * i));
    return std::move(buf_);
  }

 private:
  std::vector<uint8_t> buf_;
};

inline uint64_t decode_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

// Reads one payload. A read past its end sets failed() and yields zeros/empties, so a
// decoder reads all fields and checks failed() once at the end.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return take(1) ? data_[pos_ - 1] : 0; }
  int64_t i64() { return take(8) ? static_cast<int64_t>(decode_u64(data_ + pos_ - 8)) : 0; }
  std::vector<uint8_t> bytes() {
    int64_t size = i64();
    if (size < 0 || !take(static_cast<size_t>(size))) return fail<std::vector<uint8_t>>();
    return std::vector<uint8_t>(data_ + pos_ - size, data_ + pos_);
  }
  std::string str() {
    std::vector<uint8_t> b = bytes();
    return std::string(b.begin(), b.end());
  }
  std::vector<std::string> strs() {
    int64_t count = i64();
    // Each key takes at least 8 bytes, which bounds a corrupt count before reserve().
    if (count < 0 || static_cast<uint64_t>(count) > (size_ - pos_) / 8)
      return fail<std::vector<std::string>>();
    std::vector<std::string> keys;
    keys.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count && !failed_; ++i) keys.push_back(str());
    return keys;
  }
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == size_; }

 private:
  bool take(size_t n) {
    if (failed_ || n > size_ - pos_) {
      failed_ = true;
      return false;
    }
    pos_ += n;
    return true;
  }
  template <class T>
  T fail() {
    failed_ = true;
    return T{};
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool failed_ = false;
};

inline const char* to_string(Command command) {
  switch (command) {
    case Command::SET: return "SET";
    case Command::GET: return "GET";
    case Command::ADD: return "ADD";
    case Command::COMPARE_SET: return "COMPARE_SET";
    case Command::DELETE_KEY: return "DELETE_KEY";
    case Command::CHECK: return "CHECK";
    case Command::WAIT: return "WAIT";
    case Command::NUM_KEYS: return "NUM_KEYS";
    case Command::PING: return "PING";
    case Command::ON_DISCONNECT: return "ON_DISCONNECT";
  }
  return "?";
}

}  // namespace glass::distributed::protocol
