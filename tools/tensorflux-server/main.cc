// tensorflux-server: runs one task of a cluster (master + worker services) until SIGTERM or
// SIGINT (distributed/grpc_server.h).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <pthread.h>
#include <semaphore.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/distributed/cluster_spec.h"
#include "tensorflux/distributed/grpc_channel.h"
#include "tensorflux/distributed/grpc_server.h"

namespace {

using namespace tensorflux;

// The stop signal received; OnStopSignal posts g_stop (async-signal-safe) for main.
volatile std::sig_atomic_t g_stop_signal = 0;
sem_t g_stop;

void OnStopSignal(int sig) {
  g_stop_signal = sig;
  sem_post(&g_stop);
}

const char kUsage[] =
    "usage: tensorflux-server --cluster SPEC --job NAME --task INDEX [options]\n"
    "       TF_CONFIG='{\"cluster\": {...}, \"task\": {...}}' tensorflux-server [options]\n"
    "\n"
    "Runs one task of a cluster: its devices, a worker and a master (clients connect with\n"
    "tx.Session(\"grpc://HOST:PORT\")). Stops cleanly on SIGTERM or SIGINT.\n"
    "\n"
    "  --cluster SPEC      jobs and their tasks: \"ps=h:p;worker=h:p,h:p\" (else TF_CONFIG)\n"
    "  --job NAME          this task's job (with --cluster; TF_CONFIG's task.type otherwise)\n"
    "  --task INDEX        this task's index in its job (default 0)\n"
    "                      (TF_CONFIG's task may be an \"evaluator\" outside its cluster: it\n"
    "                      then serves alone, on --port)\n"
    "  --bind HOST         address to listen on (default 127.0.0.1)\n"
    "  --port PORT         port to listen on instead of the cluster's (0: any free port)\n"
    "  --tls_cert FILE     PEM certificate chain: serve TLS (with --tls_key)\n"
    "  --tls_key FILE      PEM private key of the certificate\n"
    "  --tls_ca FILE       PEM CA: require client certificates it signed (mutual TLS); also\n"
    "                      the CA this server checks the other tasks' certificates with\n"
    "  --tls_target_name N the host name the other tasks' certificates are for\n"
    "  --token_file FILE   shared token: every call must carry it\n"
    "  --max_message_bytes N  largest request or response (default and most: 2147483647)\n"
    "  --insecure          allow a non-loopback --bind without TLS and a token\n"
    "  --cpus N            CPU devices of this task (default 1)\n"
    "  --intra_op_threads N  threads of the CPU devices' intra-op pool (default 0: one per core;\n"
    "                      oneDNN's OpenMP and OpenBLAS threads follow OMP_NUM_THREADS and\n"
    "                      OPENBLAS_NUM_THREADS)\n"
    "  --inter_op_threads N  threads of the worker's executor pool (default 0: one per core;\n"
    "                      -1: no pool, ops run on the thread that makes them ready)\n";

int Fail(const Status& s) {
  std::fprintf(stderr, "tensorflux-server: %s\n", s.ToString().c_str());
  return 1;
}

StatusOr<int64_t> ParseInt(const std::string& flag, const std::string& value) {
  int64_t v;
  if (!absl::SimpleAtoi(value, &v)) {
    return errors::InvalidArgument(flag, " wants an integer, got '", value, "'");
  }
  return v;
}

StatusOr<GrpcServerOptions> ParseFlags(const std::vector<std::string>& args) {
  GrpcServerOptions opts;
  std::string cluster_flag, job;
  int64_t task = 0, cpus = 1, port = -1, intra = 0, inter = 0;
  bool have_task = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--insecure") {
      opts.security.insecure = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      return errors::InvalidArgument("unknown flag or missing value: '", a, "'");
    }
    const std::string& v = args[++i];
    if (a == "--cluster") {
      cluster_flag = v;
    } else if (a == "--job") {
      job = v;
    } else if (a == "--task") {
      TX_ASSIGN_OR_RETURN(task, ParseInt(a, v));
      have_task = true;
    } else if (a == "--bind") {
      opts.bind_host = v;
    } else if (a == "--port") {
      TX_ASSIGN_OR_RETURN(port, ParseInt(a, v));
    } else if (a == "--tls_cert") {
      opts.security.tls_cert_file = v;
    } else if (a == "--tls_key") {
      opts.security.tls_key_file = v;
    } else if (a == "--tls_ca") {
      opts.security.tls_ca_file = v;
    } else if (a == "--tls_target_name") {
      opts.tls_target_name = v;
    } else if (a == "--token_file") {
      opts.security.token_file = v;
    } else if (a == "--max_message_bytes") {
      TX_ASSIGN_OR_RETURN(opts.security.max_message_bytes, ParseInt(a, v));
    } else if (a == "--cpus") {
      TX_ASSIGN_OR_RETURN(cpus, ParseInt(a, v));
    } else if (a == "--intra_op_threads") {
      TX_ASSIGN_OR_RETURN(intra, ParseInt(a, v));
    } else if (a == "--inter_op_threads") {
      TX_ASSIGN_OR_RETURN(inter, ParseInt(a, v));
    } else {
      return errors::InvalidArgument("unknown flag '", a, "' (see --help)");
    }
  }
  ClusterSpec cluster;
  ClusterDef standalone;  // the cluster of an evaluator outside TF_CONFIG's cluster: itself
  if (!cluster_flag.empty()) {
    TX_ASSIGN_OR_RETURN(cluster, ClusterSpec::FromFlag(cluster_flag));
    if (job.empty()) return errors::InvalidArgument("--cluster needs --job");
  } else {
    TX_ASSIGN_OR_RETURN(auto tf_config, TfConfigFromEnvironment());
    if (!tf_config.has_value()) {
      return errors::InvalidArgument("no cluster: give --cluster or set TF_CONFIG");
    }
    cluster = tf_config->cluster;
    if (job.empty()) {
      if (!tf_config->task_type.has_value()) {
        return errors::InvalidArgument("TF_CONFIG has no \"task\": give --job and --task");
      }
      job = *tf_config->task_type;
      if (!have_task) task = tf_config->task_index;
      if (!tf_config->in_cluster) {
        // TF's evaluator: not part of the training cluster, it serves alone (its own client
        // evaluates checkpoints), on --port since the cluster gives it no address.
        if (port < 0) {
          return errors::InvalidArgument(
              "TF_CONFIG's task is an evaluator, which is not in its cluster (as TF's operators "
              "set it): it runs alone; give --port");
        }
        auto* own = standalone.add_job();
        own->set_name(job);
        (*own->mutable_tasks())[static_cast<int>(task)] = absl::StrCat("127.0.0.1:", port);
      }
    }
  }
  if (task < 0 || task > INT32_MAX) return errors::InvalidArgument("--task out of range: ", task);
  if (cpus < 1 || cpus > 1024) return errors::InvalidArgument("--cpus out of range: ", cpus);
  if (intra < 0 || intra > 4096) {
    return errors::InvalidArgument("--intra_op_threads out of range: ", intra);
  }
  if (inter < -1 || inter > 4096) {
    return errors::InvalidArgument("--inter_op_threads out of range: ", inter);
  }
  if (port < -1 || port > 65535) return errors::InvalidArgument("--port out of range: ", port);
  *opts.server_def.mutable_cluster() =
      standalone.job_size() > 0 ? standalone : cluster.ToClusterDef();
  opts.server_def.set_job_name(job);
  opts.server_def.set_task_index(static_cast<int>(task));
  opts.server_def.set_protocol("grpc");
  if (port >= 0) opts.server_def.set_port(static_cast<int>(port));
  (*opts.server_def.mutable_default_session_config()->mutable_device_count())["CPU"] =
      static_cast<int>(cpus);
  opts.server_def.mutable_default_session_config()->set_intra_op_parallelism_threads(
      static_cast<int>(intra));
  opts.server_def.mutable_default_session_config()->set_inter_op_parallelism_threads(
      static_cast<int>(inter));
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  // gRPC's receive buffers come from the heap, not fresh pages, for every message
  // (grpc_channel.h); first, before any thread starts.
  TuneMallocForLargeTransfers();
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  // A handler, not sigwait: a thread started before main (OpenBLAS starts its threads when the
  // library loads) does not block the stop signals, and one delivered to it while main is not
  // in sigwait took the default action: the process killed, no clean stop (seen as
  // ServerTest.SigtermAndSigintStopCleanly's server ending by SIGTERM). The handler runs on
  // whichever thread gets the signal and wakes main. gRPC's threads, started below, block them.
  sem_init(&g_stop, 0, 0);
  struct sigaction on_stop = {};
  on_stop.sa_handler = OnStopSignal;
  sigemptyset(&on_stop.sa_mask);
  sigaction(SIGTERM, &on_stop, nullptr);
  sigaction(SIGINT, &on_stop, nullptr);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto opts = ParseFlags(args);
  if (!opts.ok()) return Fail(opts.status());
  auto server = GrpcServer::Create(*opts);
  if (!server.ok()) return Fail(server.status());
  std::fprintf(stderr, "tensorflux-server: %s listening on %s\n", (*server)->task_name().c_str(),
               (*server)->target().c_str());
  std::fflush(stderr);

  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  // EINTR: the handler ran on this thread (and posted).
  while (sem_wait(&g_stop) != 0 && errno == EINTR) continue;
  std::fprintf(stderr, "tensorflux-server: %s received, shutting down\n",
               g_stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
  (*server)->Stop();
  server->reset();
  std::fprintf(stderr, "tensorflux-server: stopped\n");
  return 0;
}
