#include "shardwise/common/input_policy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "shardwise/common/checked_math.h"
#include "shardwise/common/json_fields.h"

namespace shardwise {
namespace {

std::string TempFile(const std::string& name, const std::string& content) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(InputPolicy, RefusesWhatIsNotARegularFile) {
  const StatusOr<std::string> dir = ReadBoundedFile("/tmp", kConfigInput);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(), "/tmp: is a directory; pass the model config itself");
  const StatusOr<std::string> dev = ReadBoundedFile("/dev/zero", kTraceInput);
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.status().message(),
            "/dev/zero: is not a regular file (a device, pipe or socket); pass a trace saved on "
            "disk");
  EXPECT_NE(ReadBoundedFile("/nonexistent/x.json", kJsonInput)
                .status()
                .message()
                .find("cannot open file"),
            std::string::npos);
  // A name longer than the OS allows (NAME_MAX is 255) is an error, not an exception.
  const StatusOr<std::string> long_name = ReadBoundedFile(std::string(300, 'a'), kJsonInput);
  EXPECT_FALSE(long_name.ok());
}

TEST(InputPolicy, StatesTheSizeLimitOfTheKind) {
  const std::string path = TempFile("shardwise_big_profile.json", std::string(2 << 20, ' '));
  const StatusOr<std::string> r = ReadBoundedFile(path, kProfileInput);
  ASSERT_FALSE(r.ok());
  // 2 MiB = 2097152 bytes against the 1 MiB = 1048576-byte limit for profiles.
  EXPECT_NE(r.status().message().find("2097152 bytes, more than the profile limit of 1048576"),
            std::string::npos)
      << r.status().message();
  std::filesystem::remove(path);
}

TEST(InputPolicy, JsonNumbersOutOfRangeAreErrorsNotExceptions) {
  for (const char* text : {"1e999", "-1e400", "{\"a\": 1e400}"}) {
    const StatusOr<nlohmann::json> r = ParseJsonText(text, "x.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("x.json: not valid JSON (number overflow"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(InputPolicy, JsonNestingIsBounded) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const StatusOr<nlohmann::json> r = ParseJsonText(deep, "deep.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "deep.json: JSON nested more than 64 levels deep; is it the right file?");
  // 64 levels pass; brackets inside strings do not count.
  EXPECT_TRUE(ParseJsonText(std::string(64, '[') + std::string(64, ']'), "ok.json").ok());
  EXPECT_TRUE(ParseJsonText("{\"a\": \"" + std::string(100, '[') + "\"}", "ok.json").ok());
  EXPECT_FALSE(ParseJsonText(std::string(65, '[') + std::string(65, ']'), "x.json").ok());
}

TEST(InputPolicy, ErrorsQuoteInputOnlyAsPrintableText) {
  const StatusOr<nlohmann::json> r = ParseJsonText("{\"a\": \"\xff\x1b[31m\"}", "bin.json");
  ASSERT_FALSE(r.ok());
  const std::string message = r.status().message();
  for (char c : message) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << static_cast<int>(c);
  }
  EXPECT_EQ(Printable("ab\x01\xff"
                      "c"),
            "ab??c");
  EXPECT_EQ(Printable(std::string(100, 'x'), 10), "xxxxxxxxxx...");
}

TEST(JsonFields, IntegersOutOfRangeAreErrorsNotCasts) {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"a": 1e300, "b": 18446744073709551615, "c": 2.5, "d": -1e300, "e": 4096.0,
          "f": 100000, "g": "7"})");
  const JsonObject o{j, "c.json"};
  EXPECT_EQ(o.Int("a").status().message(),
            "c.json: 'a' (1e+300) is larger than the largest accepted, 9223372036854775807");
  EXPECT_EQ(o.Int("b").status().message(),
            "c.json: 'b' (18446744073709551615) is larger than the largest accepted, "
            "9223372036854775807");
  EXPECT_EQ(o.Int("c").status().message(), "c.json: 'c' must be an integer, got 2.5");
  EXPECT_EQ(o.Int("d").status().message(), "c.json: 'd' must not be negative, got -1e+300");
  EXPECT_EQ(o.Int("e").value(), 4096);
  EXPECT_EQ(o.Int("f", 4096).status().message(),
            "c.json: 'f' (100000) is larger than the largest accepted, 4096");
  EXPECT_EQ(o.Int("g").status().message(), "c.json: 'g' must be an integer, got \"7\"");
}

TEST(CheckedMath, ReportsOverflowInsteadOfWrapping) {
  EXPECT_EQ(CheckedMul(3, 4), 12);
  EXPECT_FALSE(CheckedMul(int64_t{1} << 32, int64_t{1} << 31));
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1));
  EXPECT_FALSE(CheckedProduct({9999999, 9999999, 9999999}));  // 1e21 > 9.2e18
  EXPECT_EQ(CheckedProduct({2, 3, 7}), 42);
}

}  // namespace
}  // namespace shardwise
