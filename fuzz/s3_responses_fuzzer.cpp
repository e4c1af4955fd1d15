// What an S3 client reads from a store and from the machine (src/client/s3_parse.cpp): the
// XML answers (ListObjectsV2 pages, <Error> documents, CreateMultipartUpload's UploadId), AWS
// config and credentials files, s3:// URLs, and coinfer-batch's manifest object
// (src/offline/file_sink.cpp, parse_manifest), which an S3 output reads back on --resume.
//
// Input: a selector byte, then the text. Each parser returns a Status or a bool; whatever it
// accepts must be usable: listed keys and sizes, a non-empty upload id, chunk entries.
#include <cstdint>
#include <string>
#include <string_view>

#include "coinfer/client/s3_client.hpp"
#include "../src/offline/sink_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  using namespace coinfer;
  switch (data[0] % 6) {
    case 0: {
      client::s3_xml::ListPage page;
      if (client::s3_xml::parse_list(text, page).ok()) {
        std::uint64_t total = 0;
        for (const auto& o : page.objects) total += o.size + o.key.size();
        if (page.truncated && page.next_token.empty() && total == 0) __builtin_trap();
      }
      break;
    }
    case 1: {
      std::string code, message;
      if (client::s3_xml::parse_error(text, code, message) && code.empty()) __builtin_trap();
      break;
    }
    case 2: {
      std::string id;
      if (client::s3_xml::parse_upload_id(text, id).ok() && id.empty()) __builtin_trap();
      break;
    }
    case 3: {
      client::AwsProfile profile;
      (void)client::parse_aws_profile(text, "default", profile);
      (void)client::parse_aws_profile(text, "batch", profile);
      break;
    }
    case 4: {
      client::S3Url url;
      if (client::parse_s3_url(text, url).ok() && (url.bucket.size() < 3 || url.bucket.size() > 63)) __builtin_trap();
      break;
    }
    default: {
      offline::Manifest manifest;
      if (offline::parse_manifest(text, "manifest.json", manifest).ok())
        for (const auto& c : manifest.chunks) (void)(c.rows + c.results);
      (void)offline::manifest_shards(text);
      (void)offline::part_chunk(text);
      break;
    }
  }
  return 0;
}
