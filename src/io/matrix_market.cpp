// Matrix Market reader and writer: a chunked line reader over plain or gzip files, a
// hand-written tokenizer on std::from_chars, and buffered writers.
#include "kryflow/io/matrix_market.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "kryflow/core/error.hpp"

namespace kryflow::io {
namespace {

/// Bytes read from the file (or inflated from the gzip stream) per call.
constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
/// A line longer than this is taken as a sign of a file that is not Matrix Market text.
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
/// zlib's internal buffer for gzwrite (the default 8 KiB makes small writes slow).
constexpr unsigned kGzipBufferBytes = 1u << 18;
constexpr std::int64_t kMaxIndex = std::numeric_limits<index_t>::max();

const char* const kBannerShape = "'%%MatrixMarket matrix <format> <field> <symmetry>'";

std::string system_message() {
  return std::strerror(errno);
}

/// Splits a file into lines: reads large chunks (fread; after the gzip magic bytes 1f 8b the
/// chunks are inflated with zlib), hands out complete lines as views into the chunk and counts
/// them (1-based). zlib's inflate is driven directly rather than through gzread, because gzread
/// discards the text it inflated in a call that ends in an error, so a damaged stream could
/// only be blamed on the line where that call began, up to a whole chunk early; here the text
/// inflated before the damage is parsed first and the error names the line where it stops.
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& file) : name_(file.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) {
      throw InvalidInput("cannot open Matrix Market file '" + name_ + "': it is a directory");
    }
    file_ = std::fopen(name_.c_str(), "rb");
    if (file_ == nullptr) {
      throw InvalidInput("cannot open Matrix Market file '" + name_ + "': " + system_message());
    }
    unsigned char magic[2] = {0, 0};
    const std::size_t got = std::fread(magic, 1, 2, file_);
    gzip_ = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (std::fseek(file_, 0, SEEK_END) == 0) {
      const long size = std::ftell(file_);
      if (size > 0) bytes_on_disk_ = static_cast<std::uint64_t>(size);
    }
    std::rewind(file_);
    if (gzip_) {
      if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {  // 16: gzip wrapper only
        std::fclose(file_);
        throw InvalidInput("cannot start zlib to read '" + name_ + "'");
      }
      compressed_.reset(new unsigned char[kCompressedChunkBytes]);
    }
    buffer_.reset(new char[kChunkBytes]);
  }
  ~LineReader() {
    if (gzip_) inflateEnd(&stream_);
    std::fclose(file_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// The next line without its '\n' (a '\r' before it stays; the tokenizer skips it); false
  /// at the end of the file.
  bool next(std::string_view& line) {
    for (;;) {
      const char* first = buffer_.get() + begin_;
      const std::size_t available = end_ - begin_;
      const void* newline = available > 0 ? std::memchr(first, '\n', available) : nullptr;
      if (newline != nullptr) {
        const char* nl = static_cast<const char*>(newline);
        line = std::string_view(first, static_cast<std::size_t>(nl - first));
        begin_ += line.size() + 1;
        ++line_;
        return true;
      }
      if (available > kMaxLineBytes) {
        fail_at(line_ + 1, "line longer than " + std::to_string(kMaxLineBytes) +
                               " bytes: not a text Matrix Market file");
      }
      if (eof_) {
        if (available == 0) return false;
        line = std::string_view(first, available);
        begin_ = end_;
        ++line_;
        return true;
      }
      fill();
    }
  }

  /// Number of the line `next` returned last (0 before the first).
  long long line() const noexcept { return line_; }
  /// The line an end-of-file error points at: the last line of the file (1 when empty).
  long long last_line() const noexcept { return std::max(line_, 1LL); }
  const std::string& name() const noexcept { return name_; }
  bool gzip() const noexcept { return gzip_; }
  std::uint64_t bytes_on_disk() const noexcept { return bytes_on_disk_; }

  [[noreturn]] void fail(const std::string& problem) const { fail_at(line_, problem); }
  [[noreturn]] void fail_at(long long line, const std::string& problem) const {
    throw ParseError(name_, line, problem);
  }

 private:
  /// Compressed bytes read per fread when inflating.
  static constexpr std::size_t kCompressedChunkBytes = std::size_t{1} << 20;

  /// Moves the unfinished line to the front of the buffer and reads (or inflates) after it.
  void fill() {
    const std::size_t keep = end_ - begin_;
    if (!stream_error_.empty()) {
      // The text before the damage has been handed out: blame the line where it stops.
      if (keep > 0) fail_at(line_ + 1, stream_error_ + "; the text stops inside this line");
      if (line_ == 0) fail_at(1, stream_error_ + "; no text could be read");
      fail_at(line_, stream_error_ + "; the text stops after this line");
    }
    if (begin_ > 0 && keep > 0) std::memmove(buffer_.get(), buffer_.get() + begin_, keep);
    begin_ = 0;
    end_ = keep;
    char* dst = buffer_.get() + end_;
    const std::size_t room = kChunkBytes - end_;  // >= kChunkBytes - kMaxLineBytes
    const std::size_t n = gzip_ ? inflate_into(dst, room) : read_into(dst, room);
    end_ += n;
    if (n == 0 && stream_error_.empty()) eof_ = true;
  }

  std::size_t read_into(void* dst, std::size_t room) {
    const std::size_t n = std::fread(dst, 1, room, file_);
    if (n == 0 && std::ferror(file_) != 0) {
      fail_at(line_ + 1, "read error (" + system_message() + ") while reading this line");
    }
    return n;
  }

  /// Inflates up to `room` bytes into dst. A damaged stream sets stream_error_ (raised by the
  /// next fill, once the text before it is parsed). Concatenated gzip members are read in turn;
  /// bytes after the last member that do not start another one are ignored, as gzip does.
  std::size_t inflate_into(char* dst, std::size_t room) {
    stream_.next_out = reinterpret_cast<Bytef*>(dst);
    stream_.avail_out = static_cast<uInt>(room);
    while (stream_.avail_out > 0) {
      if (stream_.avail_in == 0 && !input_eof_) {
        const std::size_t n = read_into(compressed_.get(), kCompressedChunkBytes);
        input_eof_ = n == 0;
        stream_.next_in = compressed_.get();
        stream_.avail_in = static_cast<uInt>(n);
      }
      if (stream_.avail_in == 0) {
        if (!member_done_) {
          stream_error_ = "truncated gzip stream (zlib: unexpected end of file)";
        }
        break;
      }
      if (member_done_) {
        if (stream_.next_in[0] != 0x1f) break;  // trailing bytes, not another member
        inflateReset(&stream_);
        member_done_ = false;
      }
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        stream_error_ = std::string("corrupt gzip stream (zlib: ") +
                        (stream_.msg != nullptr ? stream_.msg : zError(rc)) + ")";
        break;
      }
    }
    return room - stream_.avail_out;
  }

  std::string name_;
  std::FILE* file_ = nullptr;
  bool gzip_ = false;
  std::uint64_t bytes_on_disk_ = 0;
  std::unique_ptr<char[]> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  long long line_ = 0;
  // gzip state
  z_stream stream_{};
  std::unique_ptr<unsigned char[]> compressed_;
  bool input_eof_ = false;
  bool member_done_ = false;
  std::string stream_error_;
};

// ---- Tokenizer -------------------------------------------------------------------------------

inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

inline void skip_blanks(const char*& p, const char* end) {
  while (p != end && is_blank(*p)) ++p;
}

inline const char* token_end(const char* p, const char* end) {
  while (p != end && !is_blank(*p)) ++p;
  return p;
}

/// True for a line that holds only blanks or a comment ('%' as first non-blank character).
inline bool is_blank_or_comment(std::string_view line) {
  const char* p = line.data();
  const char* end = p + line.size();
  skip_blanks(p, end);
  return p == end || *p == '%';
}

/// The first byte of [p, end) that no text file holds (NUL and other control characters), or
/// -1 when there is none.
int binary_byte(const char* p, const char* end) {
  for (; p != end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f') || c == 0x7f) return c;
  }
  return -1;
}

/// The token at p, quoted for a message: at most 32 characters, control bytes as \xNN.
std::string quote_token(const char* p, const char* end) {
  const char* stop = token_end(p, end);
  std::string out = "'";
  std::size_t shown = 0;
  for (const char* q = p; q != stop && shown < 32; ++q, ++shown) {
    const auto c = static_cast<unsigned char>(*q);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (stop - p > 32) out += "...";
  return out + "'";
}

/// Throws the ParseError for an unexpected token at p where `expected` should be: says so, or
/// that the line is not text when it holds a binary byte.
[[noreturn]] void fail_token(const LineReader& in, const char* p, const char* line_end,
                             const std::string& expected) {
  const int byte = binary_byte(p, line_end);
  if (byte >= 0) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", byte);
    in.fail("not a text file: byte " + std::string(hex) + " where " + expected + " was expected");
  }
  in.fail("expected " + expected + ", found " + quote_token(p, line_end));
}

enum class Scan { ok, missing, malformed, out_of_range, not_finite };

/// Skips blanks and reads one integer token (an optional '+' or '-', then digits).
inline Scan scan_integer(const char*& p, const char* end, std::int64_t& value) {
  skip_blanks(p, end);
  if (p == end) return Scan::missing;
  const char* first = p;
  if (*first == '+' && first + 1 != end && first[1] != '-' && first[1] != '+') ++first;
  const auto [stop, ec] = std::from_chars(first, end, value);
  if (ec == std::errc::invalid_argument || (stop != end && !is_blank(*stop))) {
    return Scan::malformed;
  }
  if (ec == std::errc::result_out_of_range) return Scan::out_of_range;
  p = stop;
  return Scan::ok;
}

/// Re-reads a token from_chars found out of range with strtod, which tells overflow (an error)
/// from underflow (the nearest double: zero or a subnormal, as strtod rounds).
Scan rescan_out_of_range(const char* first, const char* stop, double& value) {
  std::array<char, 128> text{};
  const auto n = static_cast<std::size_t>(stop - first);
  if (n >= text.size()) return Scan::out_of_range;
  std::memcpy(text.data(), first, n);
  const double v = std::strtod(text.data(), nullptr);
  if (std::isinf(v)) return Scan::out_of_range;
  value = v;
  return Scan::ok;
}

/// Skips blanks and reads one real token (decimal or exponent form, optional sign).
inline Scan scan_real(const char*& p, const char* end, double& value) {
  skip_blanks(p, end);
  if (p == end) return Scan::missing;
  const char* first = p;
  if (*first == '+' && first + 1 != end && first[1] != '-' && first[1] != '+') ++first;
  const auto [stop, ec] = std::from_chars(first, end, value, std::chars_format::general);
  if (ec == std::errc::invalid_argument || (stop != end && !is_blank(*stop))) {
    return Scan::malformed;
  }
  if (ec == std::errc::result_out_of_range) {
    const Scan s = rescan_out_of_range(first, stop, value);
    if (s != Scan::ok) return s;
  }
  if (!std::isfinite(value)) return Scan::not_finite;
  p = stop;
  return Scan::ok;
}

// ---- Header ----------------------------------------------------------------------------------

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  const char* p = line.data();
  const char* end = p + line.size();
  for (;;) {
    skip_blanks(p, end);
    if (p == end) return tokens;
    const char* stop = token_end(p, end);
    tokens.emplace_back(p, static_cast<std::size_t>(stop - p));
    p = stop;
  }
}

std::string quoted(std::string_view token) {
  return quote_token(token.data(), token.data() + token.size());
}

/// Reads and checks the banner: the first line that is not blank.
void parse_banner(LineReader& in, MatrixMarketHeader& h) {
  std::string_view line;
  bool found = false;
  while (in.next(line)) {
    if (line.size() >= 3 && static_cast<unsigned char>(line[0]) == 0xef &&
        static_cast<unsigned char>(line[1]) == 0xbb &&
        static_cast<unsigned char>(line[2]) == 0xbf) {
      line.remove_prefix(3);  // UTF-8 byte order mark
    }
    const char* p = line.data();
    skip_blanks(p, line.data() + line.size());
    if (p != line.data() + line.size()) {
      found = true;
      break;
    }
  }
  if (!found) {
    in.fail_at(in.last_line(), std::string("empty file: expected the banner ") + kBannerShape);
  }
  const int byte = binary_byte(line.data(), line.data() + line.size());
  if (byte >= 0) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", byte);
    in.fail("not a text file (byte " + std::string(hex) + " in the first line): expected the " +
            "banner " + kBannerShape);
  }
  const std::vector<std::string_view> t = split_tokens(line);
  if (t.empty() || !equals_ignoring_case(t[0], "%%MatrixMarket")) {
    in.fail(std::string("expected the banner ") + kBannerShape + ", found " +
            (t.empty() ? std::string("a blank line") : quoted(t[0])));
  }
  static const char* const kParts[] = {"object", "format", "field", "symmetry"};
  if (t.size() < 5) {
    in.fail(std::string("incomplete banner: the ") + kParts[t.size() - 1] +
            " is missing; expected " + kBannerShape);
  }
  if (!equals_ignoring_case(t[1], "matrix")) {
    in.fail("unknown object " + quoted(t[1]) + " in the banner: expected 'matrix'");
  }
  if (equals_ignoring_case(t[2], "coordinate")) {
    h.coordinate = true;
  } else if (equals_ignoring_case(t[2], "array")) {
    h.coordinate = false;
  } else {
    in.fail("unknown format " + quoted(t[2]) + " in the banner: expected 'coordinate' or 'array'");
  }
  if (equals_ignoring_case(t[3], "real")) {
    h.field = MatrixMarketField::real;
  } else if (equals_ignoring_case(t[3], "integer")) {
    h.field = MatrixMarketField::integer;
  } else if (equals_ignoring_case(t[3], "pattern")) {
    h.field = MatrixMarketField::pattern;
  } else if (equals_ignoring_case(t[3], "complex")) {
    in.fail("field 'complex' is not supported: kryflow reads real, integer and pattern files");
  } else {
    in.fail("unknown field " + quoted(t[3]) +
            " in the banner: expected 'real', 'integer' or 'pattern'");
  }
  if (equals_ignoring_case(t[4], "general")) {
    h.symmetry = MatrixMarketSymmetry::general;
  } else if (equals_ignoring_case(t[4], "symmetric")) {
    h.symmetry = MatrixMarketSymmetry::symmetric;
  } else if (equals_ignoring_case(t[4], "skew-symmetric")) {
    h.symmetry = MatrixMarketSymmetry::skew_symmetric;
  } else if (equals_ignoring_case(t[4], "hermitian")) {
    in.fail(
        "symmetry 'hermitian' is not supported: kryflow reads general, symmetric and "
        "skew-symmetric files");
  } else {
    in.fail("unknown symmetry " + quoted(t[4]) +
            " in the banner: expected 'general', 'symmetric' or 'skew-symmetric'");
  }
  if (t.size() > 5) {
    in.fail("unexpected token " + quoted(t[5]) + " after the symmetry in the banner");
  }
  if (!h.coordinate && h.field == MatrixMarketField::pattern) {
    in.fail("an 'array' file cannot have the field 'pattern' (it stores every value)");
  }
  if (h.field == MatrixMarketField::pattern && h.symmetry == MatrixMarketSymmetry::skew_symmetric) {
    in.fail("a 'pattern' file cannot be 'skew-symmetric' (it stores no values to negate)");
  }
}

/// Reads the size line: '<rows> <columns> <entries>' (coordinate) or '<rows> <columns>'
/// (array), after any comments and blank lines. Returns its line number.
long long parse_size_line(LineReader& in, MatrixMarketHeader& h) {
  const char* shape = h.coordinate ? "'<rows> <columns> <entries>'" : "'<rows> <columns>'";
  const int count = h.coordinate ? 3 : 2;
  static const char* const kNames[] = {"rows", "columns", "entries"};
  std::string_view line;
  bool found = false;
  while (in.next(line)) {
    if (!is_blank_or_comment(line)) {
      found = true;
      break;
    }
  }
  if (!found) {
    in.fail_at(in.last_line(), std::string("file ends before the size line: expected ") + shape);
  }
  const char* p = line.data();
  const char* end = p + line.size();
  std::int64_t values[3] = {0, 0, 0};
  for (int k = 0; k < count; ++k) {
    const char* token = p;
    skip_blanks(token, end);
    switch (scan_integer(p, end, values[k])) {
      case Scan::ok:
        break;
      case Scan::missing:
        in.fail("the size line has " + std::to_string(k) + " of the " + std::to_string(count) +
                " numbers " + shape);
      case Scan::out_of_range:
        in.fail(std::string("number of ") + kNames[k] + " " + quote_token(token, end) +
                " on the size line is too large");
      default:
        fail_token(in, token, end,
                   std::string("a non-negative integer (number of ") + kNames[k] +
                       ") on the size line " + shape);
    }
    if (values[k] < 0) {
      in.fail(std::string("negative number of ") + kNames[k] + " " + std::to_string(values[k]) +
              " on the size line");
    }
  }
  skip_blanks(p, end);
  if (p != end) {
    fail_token(in, p, end, std::string("the end of the size line after ") + shape);
  }
  for (int k = 0; k < 2; ++k) {
    if (values[k] > kMaxIndex) {
      in.fail(std::string("number of ") + kNames[k] + " " + std::to_string(values[k]) +
              " exceeds the 32-bit index limit " + std::to_string(kMaxIndex));
    }
  }
  h.num_rows = values[0];
  h.num_cols = values[1];
  h.size_line = in.line();
  if (h.symmetry != MatrixMarketSymmetry::general && h.num_rows != h.num_cols) {
    in.fail("a symmetric or skew-symmetric matrix must be square; the size line says " +
            std::to_string(h.num_rows) + " x " + std::to_string(h.num_cols));
  }
  if (h.coordinate) {
    h.num_entries = values[2];
  } else {
    const std::int64_t n = h.num_rows;
    switch (h.symmetry) {
      case MatrixMarketSymmetry::general:
        h.num_entries = h.num_rows * h.num_cols;
        break;
      case MatrixMarketSymmetry::symmetric:
        h.num_entries = n * (n + 1) / 2;
        break;
      case MatrixMarketSymmetry::skew_symmetric:
        h.num_entries = n * (n - 1) / 2;
        break;
    }
  }
  return in.line();
}

// ---- Entries ---------------------------------------------------------------------------------

const char* entry_shape(MatrixMarketField field) {
  return field == MatrixMarketField::pattern ? "'<row> <column>'" : "'<row> <column> <value>'";
}

/// Reads one value token of `field` at p; throws a ParseError naming what was wrong.
inline double read_value(const LineReader& in, MatrixMarketField field, const char*& p,
                         const char* end, const char* shape) {
  const char* token = p;
  skip_blanks(token, end);
  if (field == MatrixMarketField::integer) {
    std::int64_t v = 0;
    switch (scan_integer(p, end, v)) {
      case Scan::ok:
        return static_cast<double>(v);
      case Scan::missing:
        in.fail(std::string("the value is missing: expected ") + shape);
      case Scan::out_of_range:
        in.fail("integer value " + quote_token(token, end) + " does not fit 64 bits");
      default:
        fail_token(in, token, end, "an integer value");
    }
  }
  double v = 0.0;
  switch (scan_real(p, end, v)) {
    case Scan::ok:
      return v;
    case Scan::missing:
      in.fail(std::string("the value is missing: expected ") + shape);
    case Scan::out_of_range:
      in.fail("value " + quote_token(token, end) + " overflows a double");
    case Scan::not_finite:
      in.fail("value " + quote_token(token, end) + " is NaN or Inf; entries must be finite");
    default:
      fail_token(in, token, end, "a real value");
  }
}

/// Reads one 1-based index in 1..limit at p and returns it 0-based.
inline index_t read_index(const LineReader& in, const char*& p, const char* end, std::int64_t limit,
                          const char* what, const char* shape) {
  const char* token = p;
  skip_blanks(token, end);
  std::int64_t v = 0;
  switch (scan_integer(p, end, v)) {
    case Scan::ok:
      break;
    case Scan::missing:
      in.fail(std::string("the ") + what + " index is missing: expected " + shape);
    case Scan::out_of_range:
      in.fail(std::string(what) + " index " + quote_token(token, end) + " is out of range 1.." +
              std::to_string(limit));
    default:
      fail_token(in, token, end, std::string("an integer ") + what + " index");
  }
  if (v < 1 || v > limit) {
    in.fail(std::string(what) + " index " + std::to_string(v) + " is out of range 1.." +
            std::to_string(limit) + (v == 0 ? " (indices are 1-based)" : ""));
  }
  return static_cast<index_t>(v - 1);
}

/// Requires that only blanks remain on the line after a complete record.
inline void expect_line_end(const LineReader& in, const char* p, const char* end,
                            const char* shape) {
  skip_blanks(p, end);
  if (p != end) fail_token(in, p, end, std::string("the end of the line after ") + shape);
}

/// After the last declared record only comments and blank lines may follow.
void expect_no_more_records(LineReader& in, const MatrixMarketHeader& h, long long size_line) {
  std::string_view line;
  while (in.next(line)) {
    if (!is_blank_or_comment(line)) {
      in.fail(std::string("more ") + (h.coordinate ? "entries" : "values") + " than the " +
              std::to_string(h.num_entries) + " declared on the size line (line " +
              std::to_string(size_line) + ")");
    }
  }
}

[[noreturn]] void fail_too_few(const LineReader& in, const MatrixMarketHeader& h,
                               std::int64_t found, long long size_line) {
  in.fail_at(in.last_line(),
             std::string("file ends after ") + std::to_string(found) + " of the " +
                 std::to_string(h.num_entries) + " " + (h.coordinate ? "entries" : "values") +
                 " declared on the size line (line " + std::to_string(size_line) + ")");
}

/// Calls emit(row, col, value) (0-based) for every stored entry of a coordinate file.
template <class Emit>
void read_coordinate_entries(LineReader& in, const MatrixMarketHeader& h, long long size_line,
                             Emit&& emit) {
  const char* shape = entry_shape(h.field);
  const bool skew = h.symmetry == MatrixMarketSymmetry::skew_symmetric;
  std::int64_t found = 0;
  std::string_view line;
  while (found < h.num_entries) {
    if (!in.next(line)) fail_too_few(in, h, found, size_line);
    const char* p = line.data();
    const char* end = p + line.size();
    skip_blanks(p, end);
    if (p == end || *p == '%') continue;
    const index_t i = read_index(in, p, end, h.num_rows, "row", shape);
    const index_t j = read_index(in, p, end, h.num_cols, "column", shape);
    double v = 1.0;
    if (h.field != MatrixMarketField::pattern) v = read_value(in, h.field, p, end, shape);
    expect_line_end(in, p, end, shape);
    if (skew && i == j) {
      in.fail("diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
              ") in a skew-symmetric file, whose diagonal is zero by definition");
    }
    emit(i, j, v);
    ++found;
  }
  expect_no_more_records(in, h, size_line);
}

/// Calls emit(value) for every value of an array file, in file (column-major) order.
template <class Emit>
void read_array_values(LineReader& in, const MatrixMarketHeader& h, long long size_line,
                       Emit&& emit) {
  const char* shape = "'<value>'";
  std::int64_t found = 0;
  std::string_view line;
  while (found < h.num_entries) {
    if (!in.next(line)) fail_too_few(in, h, found, size_line);
    const char* p = line.data();
    const char* end = p + line.size();
    skip_blanks(p, end);
    if (p == end || *p == '%') continue;
    const double v = read_value(in, h.field, p, end, shape);
    expect_line_end(in, p, end, shape);
    emit(v);
    ++found;
  }
  expect_no_more_records(in, h, size_line);
}

/// Entries to reserve: the declared count, capped by what the file can hold (at least 4 bytes
/// per plain-text entry; gzip is capped by its compressed size) so a lying header cannot
/// allocate unbounded memory.
std::size_t reserve_count(const LineReader& in, std::int64_t declared) {
  const std::uint64_t cap = in.gzip() ? in.bytes_on_disk() : in.bytes_on_disk() / 4 + 1;
  return static_cast<std::size_t>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(declared), cap));
}

// ---- Writer ----------------------------------------------------------------------------------

/// Buffered output to a plain or gzip file (gzip when the name ends in ".gz").
class TextWriter {
 public:
  explicit TextWriter(const std::filesystem::path& file) : name_(file.string()) {
    const bool gzip = name_.size() >= 3 && name_.compare(name_.size() - 3, 3, ".gz") == 0;
    if (gzip) {
      gz_ = gzopen(name_.c_str(), "wb");
      if (gz_ == nullptr) {
        throw InvalidInput("cannot open '" + name_ + "' for writing: " + system_message());
      }
      gzbuffer(gz_, kGzipBufferBytes);
    } else {
      plain_ = std::fopen(name_.c_str(), "wb");
      if (plain_ == nullptr) {
        throw InvalidInput("cannot open '" + name_ + "' for writing: " + system_message());
      }
    }
    buffer_.reset(new char[kBufferBytes + kRecordBytes]);
  }
  ~TextWriter() {
    if (plain_ != nullptr) std::fclose(plain_);
    if (gz_ != nullptr) gzclose(gz_);
  }
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  void text(std::string_view s) {
    while (!s.empty()) {
      const std::size_t n = std::min(s.size(), kBufferBytes + kRecordBytes - used_);
      std::memcpy(buffer_.get() + used_, s.data(), n);
      used_ += n;
      s.remove_prefix(n);
      if (used_ >= kBufferBytes) flush();
    }
  }
  /// Appends the given integers and doubles (17 significant digits, as printf's %.17g),
  /// separated by spaces, and a newline.
  template <class... Numbers>
  void record(Numbers... numbers) {
    char* p = buffer_.get() + used_;
    char* const end = p + kRecordBytes - 1;  // room for the newline
    bool first = true;
    auto put = [&](auto x) {
      if (!first) *p++ = ' ';
      first = false;
      if constexpr (std::is_floating_point_v<decltype(x)>) {
        p = std::to_chars(p, end, x, std::chars_format::general, 17).ptr;
      } else {
        p = std::to_chars(p, end, x).ptr;
      }
    };
    (put(numbers), ...);
    *p++ = '\n';
    used_ = static_cast<std::size_t>(p - buffer_.get());
    if (used_ >= kBufferBytes) flush();
  }
  /// Flushes and closes; throws InvalidInput when any write failed.
  void close() {
    flush();
    if (plain_ != nullptr) {
      const int rc = std::fclose(plain_);
      plain_ = nullptr;
      if (rc != 0) fail();
    }
    if (gz_ != nullptr) {
      const int rc = gzclose(gz_);
      gz_ = nullptr;
      if (rc != Z_OK) fail();
    }
  }

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  /// Room for one record: three 20-digit integers or %.17g doubles (at most 24 characters)
  /// with separators fit.
  static constexpr std::size_t kRecordBytes = 96;

  void flush() {
    if (used_ == 0) return;
    bool ok = true;
    if (plain_ != nullptr) {
      ok = std::fwrite(buffer_.get(), 1, used_, plain_) == used_;
    } else if (gz_ != nullptr) {
      ok = gzwrite(gz_, buffer_.get(), static_cast<unsigned>(used_)) == static_cast<int>(used_);
    }
    used_ = 0;
    if (!ok) fail();
  }
  [[noreturn]] void fail() {
    throw InvalidInput("cannot write Matrix Market file '" + name_ + "': " + system_message());
  }

  std::string name_;
  std::FILE* plain_ = nullptr;
  gzFile gz_ = nullptr;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
};

void write_coordinate(const std::filesystem::path& file, index_t num_rows, index_t num_cols,
                      std::size_t nnz, const index_t* row_ptr, const index_t* row_idx,
                      const index_t* col_idx, const double* values) {
  TextWriter out(file);
  out.text("%%MatrixMarket matrix coordinate real general\n% written by kryflow " KRYFLOW_VERSION
           "\n");
  out.record(static_cast<std::int64_t>(num_rows), static_cast<std::int64_t>(num_cols),
             static_cast<std::int64_t>(nnz));
  if (row_ptr != nullptr) {
    for (index_t i = 0; i < num_rows; ++i) {
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        out.record(i + 1, col_idx[k] + 1, values[k]);
      }
    }
  } else {
    for (std::size_t k = 0; k < nnz; ++k) out.record(row_idx[k] + 1, col_idx[k] + 1, values[k]);
  }
  out.close();
}

}  // namespace

MatrixMarketHeader read_matrix_market_header(const std::filesystem::path& file) {
  LineReader in(file);
  MatrixMarketHeader h;
  parse_banner(in, h);
  parse_size_line(in, h);
  return h;
}

CooMatrix read_matrix_market(const std::filesystem::path& file, MatrixMarketHeader* header) {
  LineReader in(file);
  MatrixMarketHeader h;
  parse_banner(in, h);
  const long long size_line = parse_size_line(in, h);
  CooMatrix A;
  A.num_rows = static_cast<index_t>(h.num_rows);
  A.num_cols = static_cast<index_t>(h.num_cols);
  const bool mirrored = h.symmetry != MatrixMarketSymmetry::general;
  const double mirror_sign = h.symmetry == MatrixMarketSymmetry::skew_symmetric ? -1.0 : 1.0;
  const std::size_t reserve = reserve_count(in, h.num_entries);
  A.reserve(mirrored ? 2 * reserve : reserve);
  if (h.coordinate) {
    read_coordinate_entries(in, h, size_line, [&](index_t i, index_t j, double v) {
      A.push_back(i, j, v);
      if (mirrored && i != j) A.push_back(j, i, mirror_sign * v);
    });
  } else {
    // Column-major; symmetric arrays list the lower triangle (skew: strictly lower) by column.
    const index_t n = A.num_rows;
    const index_t first_row_offset = h.symmetry == MatrixMarketSymmetry::skew_symmetric ? 1 : 0;
    index_t i = h.symmetry == MatrixMarketSymmetry::general ? 0 : first_row_offset;
    index_t j = 0;
    read_array_values(in, h, size_line, [&](double v) {
      A.push_back(i, j, v);
      if (mirrored && i != j) A.push_back(j, i, mirror_sign * v);
      if (++i == n) {
        ++j;
        i = h.symmetry == MatrixMarketSymmetry::general ? 0 : j + first_row_offset;
      }
    });
  }
  if (header != nullptr) *header = h;
  return A;
}

std::vector<double> read_vector(const std::filesystem::path& file) {
  LineReader in(file);
  MatrixMarketHeader h;
  parse_banner(in, h);
  if (h.symmetry != MatrixMarketSymmetry::general) {
    in.fail("a vector file must be 'general', not symmetric or skew-symmetric");
  }
  const long long size_line = parse_size_line(in, h);
  if (h.num_rows != 1 && h.num_cols != 1) {
    in.fail("expected a vector (one column or one row); the size line says " +
            std::to_string(h.num_rows) + " x " + std::to_string(h.num_cols));
  }
  const bool column = h.num_cols == 1;
  std::vector<double> x;
  if (h.coordinate) {
    x.assign(static_cast<std::size_t>(h.num_rows * h.num_cols), 0.0);
    read_coordinate_entries(in, h, size_line, [&](index_t i, index_t j, double v) {
      x[static_cast<std::size_t>(column ? i : j)] += v;
    });
  } else {
    x.reserve(reserve_count(in, h.num_entries));
    read_array_values(in, h, size_line, [&](double v) { x.push_back(v); });
  }
  return x;
}

void write_matrix_market(const std::filesystem::path& file, const CsrMatrix& A) {
  const std::vector<index_t> row_ptr = A.row_ptr().to_host();
  const std::vector<index_t> col_idx = A.col_idx().to_host();
  const std::vector<double> values = A.values_to_host();
  write_coordinate(file, A.num_rows(), A.num_cols(), values.size(),
                   row_ptr.empty() ? nullptr : row_ptr.data(), nullptr, col_idx.data(),
                   values.data());
}

void write_matrix_market(const std::filesystem::path& file, const CooMatrix& A) {
  const std::size_t n = A.num_entries();
  if (A.row_idx.size() != n || A.col_idx.size() != n) {
    throw InvalidInput("write_matrix_market('" + file.string() + "'): COO arrays differ in length");
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (A.row_idx[k] < 0 || A.row_idx[k] >= A.num_rows || A.col_idx[k] < 0 ||
        A.col_idx[k] >= A.num_cols) {
      throw InvalidInput("write_matrix_market('" + file.string() + "'): COO entry " +
                         std::to_string(k + 1) + " (" + std::to_string(A.row_idx[k] + 1) + ", " +
                         std::to_string(A.col_idx[k] + 1) + ") is outside the " +
                         std::to_string(A.num_rows) + " x " + std::to_string(A.num_cols) +
                         " matrix");
    }
  }
  write_coordinate(file, A.num_rows, A.num_cols, n, nullptr, A.row_idx.data(), A.col_idx.data(),
                   A.values.data());
}

void write_vector(const std::filesystem::path& file, Span<const double> x) {
  if (x.size() > static_cast<std::size_t>(kMaxIndex)) {
    throw InvalidInput("write_vector('" + file.string() + "'): " + std::to_string(x.size()) +
                       " entries exceed the 32-bit index limit");
  }
  TextWriter out(file);
  out.text("%%MatrixMarket matrix array real general\n% written by kryflow " KRYFLOW_VERSION "\n");
  out.record(static_cast<std::int64_t>(x.size()), std::int64_t{1});
  for (const double v : x) out.record(v);
  out.close();
}

}  // namespace kryflow::io
