// SigV4 against AWS's published examples, and the S3 client's parsers.
#include <doctest/doctest.h>

#include "coinfer/client/s3_client.hpp"
#include "coinfer/client/sigv4.hpp"

using namespace coinfer;
using namespace coinfer::client;

namespace {

// AWS's SigV4 test suite (docs.aws.amazon.com, "Signature Version 4 test suite"): service
// "service", us-east-1, 2015-08-30T12:36:00Z.
const sigv4::Credentials suite{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
// The S3 examples of "Signature Calculations for the Authorization Header" (S3 API reference):
// examplebucket, us-east-1, 2013-05-24T00:00:00Z.
const sigv4::Credentials s3_example{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
constexpr std::string_view empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

sigv4::Signature suite_get(std::string_view query) {
  sigv4::Request r{"GET", "/", query, {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}}, empty_sha256};
  return sigv4::sign(r, suite, "us-east-1", "service", "20150830T123600Z");
}

sigv4::Signature s3_sign(std::string_view method, const std::string& path, std::string_view query,
                         std::vector<std::pair<std::string, std::string>> headers, std::string_view payload) {
  headers.emplace_back("Host", "examplebucket.s3.amazonaws.com");
  headers.emplace_back("x-amz-date", "20130524T000000Z");
  headers.emplace_back("x-amz-content-sha256", std::string(payload));
  const std::string encoded = sigv4::uri_encode(path, false);
  sigv4::Request r{method, encoded, query, headers, payload};
  return sigv4::sign(r, s3_example, "us-east-1", "s3", "20130524T000000Z");
}

}  // namespace

TEST_CASE("sigv4: AWS's test suite, get-vanilla and a query sorted before signing") {
  const auto vanilla = suite_get("");
  CHECK(vanilla.authorization ==
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=host;x-amz-date, "
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  CHECK(vanilla.canonical_request ==
        "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" +
            std::string(empty_sha256));
  CHECK(suite_get("Param2=value2&Param1=value1").signature ==
        "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST_CASE("sigv4: the S3 API reference's GET object (Range), PUT object, GET lifecycle and list") {
  const auto get = s3_sign("GET", "/test.txt", "", {{"Range", "bytes=0-9"}}, empty_sha256);
  CHECK(get.signed_headers == "host;range;x-amz-content-sha256;x-amz-date");
  CHECK(get.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

  const std::string body = "Welcome to Amazon S3.";
  const std::string body_sha = sigv4::sha256_hex(body);
  CHECK(body_sha == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  // '$' in the key is percent-encoded in the canonical path ("/test%24file.text").
  const auto put = s3_sign("PUT", "/test$file.text", "",
                           {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                           body_sha);
  CHECK(put.canonical_request.starts_with("PUT\n/test%24file.text\n\n"));
  CHECK(put.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");

  CHECK(s3_sign("GET", "/", "lifecycle", {}, empty_sha256).signature ==
        "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  CHECK(s3_sign("GET", "/", "prefix=J&max-keys=2", {}, empty_sha256).signature ==
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST_CASE("sigv4: percent-encoding keeps unreserved bytes and '/' (paths), encodes the rest") {
  CHECK(sigv4::uri_encode("a-b_c.d~e/f g+h", false) == "a-b_c.d~e/f%20g%2Bh");
  CHECK(sigv4::uri_encode("a/b=c&d", true) == "a%2Fb%3Dc%26d");
  CHECK(sigv4::uri_encode("\xc3\xa9", true) == "%C3%A9");
  CHECK(sigv4::amz_date(std::chrono::system_clock::from_time_t(1440938160)) == "20150830T123600Z");
}

TEST_CASE("s3: URLs name a valid bucket and a key or prefix") {
  S3Url u;
  REQUIRE(parse_s3_url("s3://my-bucket/data/part-1.jsonl", u).ok());
  CHECK(u.bucket == "my-bucket");
  CHECK(u.key == "data/part-1.jsonl");
  REQUIRE(parse_s3_url("s3://my-bucket", u).ok());
  CHECK(u.key.empty());
  CHECK(parse_s3_url("https://x/y", u).message().find("not an s3:// URL") != std::string::npos);
  CHECK(parse_s3_url("s3://My_Bucket/k", u).message().find("not a bucket name") != std::string::npos);
  CHECK(!parse_s3_url("s3://ab/k", u).ok());
}

TEST_CASE("s3: ListObjectsV2 pages, errors and upload ids are read from S3's XML") {
  s3_xml::ListPage page;
  REQUIRE(s3_xml::parse_list(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>in/</Prefix>
<KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
<Contents><Key>in/a&amp;b.jsonl</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><Size>120</Size></Contents>
<Contents><Key>in/&#233;.jsonl</Key><Size>7</Size></Contents>
<NextContinuationToken>tok/+=</NextContinuationToken></ListBucketResult>)", page).ok());
  REQUIRE(page.objects.size() == 2);
  CHECK(page.objects[0].key == "in/a&b.jsonl");
  CHECK(page.objects[0].size == 120);
  CHECK(page.objects[1].key == "in/\xc3\xa9.jsonl");
  CHECK(page.truncated);
  CHECK(page.next_token == "tok/+=");

  s3_xml::ListPage empty;
  REQUIRE(s3_xml::parse_list("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", empty).ok());
  CHECK(empty.objects.empty());
  CHECK(!s3_xml::parse_list("<html>", empty).ok());
  // A truncated page must say where the next one starts: an empty token would list page one again.
  CHECK(!s3_xml::parse_list("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", empty).ok());
  CHECK(!s3_xml::parse_list(
      "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken></NextContinuationToken></ListBucketResult>",
      empty).ok());
  CHECK(!s3_xml::parse_list("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>", empty).ok());

  std::string code, message;
  REQUIRE(s3_xml::parse_error("<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>",
                              code, message));
  CHECK(code == "NoSuchBucket");
  CHECK(message == "The specified bucket does not exist");
  CHECK(!s3_xml::parse_error("<CompleteMultipartUploadResult/>", code, message));

  std::string id;
  REQUIRE(s3_xml::parse_upload_id("<InitiateMultipartUploadResult><Bucket>b</Bucket><UploadId>abc-1</UploadId></InitiateMultipartUploadResult>", id).ok());
  CHECK(id == "abc-1");
  CHECK(!s3_xml::parse_upload_id("<InitiateMultipartUploadResult/>", id).ok());
}

TEST_CASE("s3: AWS credentials and config files, by profile") {
  const std::string_view ini = R"(# comment
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key=secret/default
[profile batch]
region = eu-west-1
[batch]
aws_access_key_id = AKIDBATCH
 aws_secret_access_key = s2
aws_session_token = tok
)";
  AwsProfile p;
  REQUIRE(parse_aws_profile(ini, "default", p));
  CHECK(p.access_key_id == "AKIDDEFAULT");
  CHECK(p.secret_access_key == "secret/default");
  AwsProfile b;
  REQUIRE(parse_aws_profile(ini, "batch", b));
  CHECK(b.access_key_id == "AKIDBATCH");
  CHECK(b.secret_access_key == "s2");
  CHECK(b.session_token == "tok");
  CHECK(b.region == "eu-west-1");
  AwsProfile none;
  CHECK(!parse_aws_profile(ini, "other", none));
}
