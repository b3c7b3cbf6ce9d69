// The channel options' TLS against a worker served with gRPC's SSL credentials: certificates
// made at run time by the openssl command (skipped without it): a CA, a server certificate for
// 127.0.0.1/localhost, a client certificate. Checks: TLS with the CA works; a plain-text client,
// a client trusting another CA, and (with client certificates required) a client without one
// are refused; the client certificate gets through.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "distributed/worker_test_util.h"
#include "grpcpp/security/server_credentials.h"
#include "gtest/gtest.h"

namespace tensorflux {
namespace {

using testing::TestCluster;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v openssl > /dev/null 2>&1") != 0) {
      GTEST_SKIP() << "no openssl command to make test certificates";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("tx_tls_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string d = dir_.string();
    const std::string script = absl::StrCat(
        "cd ", d, " && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1' > san.ext && ",
        "for ca in ca other_ca; do openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $ca.key ",
        "-out $ca.pem -days 1 -subj /CN=$ca; done && ",
        "for who in server client; do openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $who.key ",
        "-out $who.csr -subj /CN=$who && openssl x509 -req -in $who.csr -CA ca.pem -CAkey ",
        "ca.key -CAcreateserial -out $who.pem -days 1 -extfile san.ext; done");
    ASSERT_EQ(std::system(("(" + script + ") > /dev/null 2>&1").c_str()), 0) << script;
    for (const char* name : {"ca", "other_ca", "server", "client"}) {
      pem_[std::string(name) + ".pem"] = ReadFile(dir_ / (std::string(name) + ".pem"));
      pem_[std::string(name) + ".key"] = ReadFile(dir_ / (std::string(name) + ".key"));
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::shared_ptr<grpc::ServerCredentials> ServerCredentials(bool require_client_cert) {
    grpc::SslServerCredentialsOptions o(
        require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                            : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    o.pem_root_certs = pem_["ca.pem"];
    o.pem_key_cert_pairs.push_back({pem_["server.key"], pem_["server.pem"]});
    return grpc::SslServerCredentials(o);
  }

  GrpcChannelOptions Tls(const std::string& ca) {
    GrpcChannelOptions o;
    o.use_tls = true;
    o.ca_cert_pem = pem_[ca + ".pem"];
    return o;
  }

  static Status Ping(const std::shared_ptr<WorkerInterface>& w) {
    if (w == nullptr) return errors::Internal("no client");
    GetStatusResponse r;
    return w->GetStatus(GetStatusRequest(), &r, /*timeout_ms=*/5000);
  }

  std::filesystem::path dir_;
  std::map<std::string, std::string> pem_;
};

TEST_F(TlsTest, ServerAuthentication) {
  TestCluster cluster(1, {}, GrpcWorkerServiceOptions(), Tls("ca"), ServerCredentials(false));
  EXPECT_TRUE(Ping(cluster.client(0)).ok());  // the cluster's own TLS channels
  EXPECT_TRUE(Ping(cluster.client_with(0, Tls("ca"))).ok());
  EXPECT_EQ(Ping(cluster.client_with(0, GrpcChannelOptions())).code(),
            absl::StatusCode::kUnavailable);  // plain text to a TLS port
  EXPECT_EQ(Ping(cluster.client_with(0, Tls("other_ca"))).code(),
            absl::StatusCode::kUnavailable);  // untrusted server certificate
}

TEST_F(TlsTest, ClientCertificateRequired) {
  TestCluster cluster(1, {}, GrpcWorkerServiceOptions(), Tls("ca"), ServerCredentials(true));
  EXPECT_EQ(Ping(cluster.client_with(0, Tls("ca"))).code(), absl::StatusCode::kUnavailable);
  GrpcChannelOptions with_cert = Tls("ca");
  with_cert.client_cert_pem = pem_["client.pem"];
  with_cert.client_key_pem = pem_["client.key"];
  Status s = Ping(cluster.client_with(0, with_cert));
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace tensorflux
