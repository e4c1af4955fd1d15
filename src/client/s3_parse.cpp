// The text formats an S3 client reads: S3's XML answers, the AWS config and credentials
// files, s3:// URLs. No I/O here (fuzz/s3_responses.cpp feeds these arbitrary bytes).
#include <algorithm>
#include <cctype>
#include <charconv>

#include "coinfer/client/s3_client.hpp"

namespace coinfer::client {
namespace {

// XML's predefined entities and character references, decoded; anything else kept as it is.
std::string xml_unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const std::size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += '&';
      continue;
    }
    const std::string_view name = text.substr(i + 1, semi - i - 1);
    std::uint32_t code = 0;
    bool ok = true;
    if (name == "amp") code = '&';
    else if (name == "lt") code = '<';
    else if (name == "gt") code = '>';
    else if (name == "quot") code = '"';
    else if (name == "apos") code = '\'';
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string_view digits = name.substr(hex ? 2 : 1);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
      ok = ec == std::errc{} && end == digits.data() + digits.size() && code > 0 && code <= 0x10FFFF &&
           !(code >= 0xD800 && code <= 0xDFFF);
    } else {
      ok = false;
    }
    if (!ok) {
      out += '&';
      continue;
    }
    // UTF-8
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
    i = semi;
  }
  return out;
}

// The content of the next <tag ...>...</tag> element at or after `from` (not nested in one of
// the same name); `from` moves past it. "<tag/>" is an empty element. False when none.
bool next_element(std::string_view xml, std::string_view tag, std::size_t& from, std::string_view& content) {
  while (from < xml.size()) {
    const std::size_t open = xml.find('<', from);
    if (open == std::string_view::npos) break;
    std::size_t p = open + 1;
    if (xml.compare(p, tag.size(), tag) != 0) {
      from = open + 1;
      continue;
    }
    p += tag.size();
    if (p >= xml.size()) break;
    const char after = xml[p];
    if (after != '>' && after != '/' && after != ' ' && after != '\t' && after != '\r' && after != '\n') {
      from = open + 1;
      continue;
    }
    const std::size_t gt = xml.find('>', p);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {  // <tag/>
      content = {};
      from = gt + 1;
      return true;
    }
    const std::string close = "</" + std::string(tag) + ">";
    const std::size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    content = xml.substr(gt + 1, end - gt - 1);
    from = end + close.size();
    return true;
  }
  from = xml.size();
  return false;
}

bool first_text(std::string_view xml, std::string_view tag, std::string& out) {
  std::size_t from = 0;
  std::string_view content;
  if (!next_element(xml, tag, from, content)) return false;
  out = xml_unescape(content);
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Status parse_s3_url(std::string_view url, S3Url& out) {
  std::string quoted = "'";
  quoted.append(url).append("'");
  if (!url.starts_with("s3://")) return Status::invalid(quoted.append(" is not an s3:// URL"));
  const std::string_view rest = url.substr(5);
  const std::size_t slash = rest.find('/');
  out.bucket.assign(rest.substr(0, slash));
  out.key.clear();
  if (slash != std::string_view::npos) out.key.assign(rest.substr(slash + 1));
  // S3's bucket naming rules: 3-63 characters of a-z 0-9 . -, starting and ending with a
  // letter or digit.
  const auto good = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'; };
  if (out.bucket.size() < 3 || out.bucket.size() > 63 || !std::all_of(out.bucket.begin(), out.bucket.end(), good) ||
      !std::isalnum(static_cast<unsigned char>(out.bucket.front())) ||
      !std::isalnum(static_cast<unsigned char>(out.bucket.back())))
    return Status::invalid(quoted.append(": '").append(out.bucket).append(
        "' is not a bucket name (3-63 characters: a-z, 0-9, '.', '-')"));
  if (out.key.size() > 1024) return Status::invalid(quoted.append(": a key is at most 1024 bytes"));
  return {};
}

namespace s3_xml {

Status parse_list(std::string_view xml, ListPage& out) {
  std::size_t from = 0;
  std::string_view result;
  if (!next_element(xml, "ListBucketResult", from, result))
    return Status::invalid("not a ListBucketResult document");
  std::size_t at = 0;
  std::string_view contents;
  while (next_element(result, "Contents", at, contents)) {
    S3Object object;
    std::string size;
    if (!first_text(contents, "Key", object.key) || !first_text(contents, "Size", size))
      return Status::invalid("a ListBucketResult entry without Key or Size");
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), object.size);
    if (ec != std::errc{} || end != size.data() + size.size())
      return Status::invalid("a ListBucketResult entry with Size '" + size + "'");
    first_text(contents, "ETag", object.etag);
    out.objects.push_back(std::move(object));
  }
  std::string truncated;
  out.truncated = first_text(result, "IsTruncated", truncated) && trim(truncated) == "true";
  out.next_token.clear();
  if (out.truncated && (!first_text(result, "NextContinuationToken", out.next_token) || out.next_token.empty()))
    return Status::invalid("a truncated ListBucketResult without a NextContinuationToken");
  return {};
}

bool parse_error(std::string_view xml, std::string& code, std::string& message) {
  std::size_t from = 0;
  std::string_view error;
  if (!next_element(xml, "Error", from, error)) return false;
  code.clear();
  message.clear();
  first_text(error, "Code", code);
  first_text(error, "Message", message);
  return !code.empty();
}

Status parse_upload_id(std::string_view xml, std::string& upload_id) {
  if (!first_text(xml, "UploadId", upload_id) || upload_id.empty())
    return Status::invalid("no UploadId in the answer to CreateMultipartUpload");
  return {};
}

}  // namespace s3_xml

bool parse_aws_profile(std::string_view ini, std::string_view name, AwsProfile& out) {
  bool found = false, inside = false;
  while (!ini.empty()) {
    const std::size_t nl = ini.find('\n');
    std::string_view line = trim(ini.substr(0, nl));
    ini = nl == std::string_view::npos ? std::string_view{} : ini.substr(nl + 1);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') {
        inside = false;
        continue;
      }
      std::string_view section = trim(line.substr(1, line.size() - 2));
      // ~/.aws/config names profiles "[profile NAME]" (but the default "[default]").
      if (section.starts_with("profile ")) section = trim(section.substr(8));
      inside = section == name;
      found = found || inside;
      continue;
    }
    if (!inside) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, eq));
    const std::string value(trim(line.substr(eq + 1)));
    if (key == "aws_access_key_id") out.access_key_id = value;
    else if (key == "aws_secret_access_key") out.secret_access_key = value;
    else if (key == "aws_session_token") out.session_token = value;
    else if (key == "region") out.region = value;
  }
  return found;
}

}  // namespace coinfer::client
