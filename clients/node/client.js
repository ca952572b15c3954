// A second-language client built from the same protos: creates, corrects and reads a memory and
// builds a context against a running memory service. Prints one JSON summary; exits non-zero on
// any mismatch. Environment: MEMORY_ADDRESS, MEMORY_TOKEN, GOOGLE_PROTOS (the google/api and
// google/rpc protos; `make gen` copies them to build/protos from googleapis-common-protos).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

const PROTOS = path.resolve(__dirname, "../../protos");
const GOOGLE_PROTOS = process.env.GOOGLE_PROTOS || path.resolve(__dirname, "../../build/protos");
const definition = protoLoader.loadSync(
  ["crmmem/memory/v1/memory_service.proto", "crmmem/memory/v1/transcript_service.proto",
   "crmmem/memory/v1/context_service.proto"],
  { includeDirs: [PROTOS, GOOGLE_PROTOS], keepCase: true, longs: String, enums: String, defaults: true },
);
const v1 = grpc.loadPackageDefinition(definition).crmmem.memory.v1;

// Error details: the `grpc-status-details-bin` trailer is a google.rpc.Status whose details are
// Any-packed messages of google/rpc/error_details.proto (ErrorInfo, BadRequest, ...) and, for a
// stale etag, the current crmmem.memory.v1.Memory.
const rpc = new protobuf.Root();
rpc.resolvePath = (origin, target) => {
  const found = [PROTOS, GOOGLE_PROTOS].map((dir) => path.join(dir, target)).find(fs.existsSync);
  return found || protobuf.util.path.resolve(origin, target);
};
rpc.loadSync(
  ["google/rpc/status.proto", "google/rpc/error_details.proto", "crmmem/memory/v1/memory.proto"],
  { keepCase: true },
);

function errorDetails(error) {
  const [bytes] = error.metadata ? error.metadata.get("grpc-status-details-bin") : [];
  if (!bytes) {
    return [];
  }
  const status = rpc.lookupType("google.rpc.Status").decode(bytes);
  return status.details.map((any) => {
    const type = rpc.lookupType(any.type_url.slice(any.type_url.lastIndexOf("/") + 1));
    return { type: type.fullName.slice(1), ...type.toObject(type.decode(any.value)) };
  });
}

const address = process.env.MEMORY_ADDRESS || "127.0.0.1:50051";
const metadata = new grpc.Metadata();
metadata.add("authorization", `Bearer ${process.env.MEMORY_TOKEN}`);
const credentials = grpc.credentials.createInsecure();
const memories = new v1.MemoryService(address, credentials);
const transcript = new v1.TranscriptService(address, credentials);
const context = new v1.ContextService(address, credentials);

function call(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + 10000 }, (error, reply) =>
      error ? reject(error) : resolve(reply));
  });
}

function check(condition, message) {
  if (!condition) {
    throw new Error(`check failed: ${message}`);
  }
}

async function main() {
  const conversation = `conversations/node-${crypto.randomUUID().slice(0, 8)}`;
  const said = await call(transcript, "AppendMessage", {
    parent: conversation,
    message: { speaker: "SPEAKER_USER", text: "I prefer morning meetings" },
  });
  const created = await call(memories, "CreateMemory", {
    memory: { scope: { type: "SCOPE_TYPE_USER" }, key: "meeting_time", kind: "MEMORY_KIND_PREFERENCE" },
    revision: {
      value: "prefers morning meetings",
      provenance: { method: "PROVENANCE_METHOD_USER_STATEMENT", transcript_message: said.message.name },
    },
    request_id: crypto.randomUUID(),
  });
  check(created.revision.state === "REVISION_STATE_ACTIVE", "the user's own words are active");

  const later = await call(transcript, "AppendMessage", {
    parent: conversation,
    message: { speaker: "SPEAKER_USER", text: "Actually, I prefer afternoon meetings now" },
  });
  const corrected = await call(memories, "CorrectMemory", {
    name: created.memory.name,
    etag: created.memory.etag,
    revision: {
      value: "prefers afternoon meetings",
      provenance: { method: "PROVENANCE_METHOD_USER_STATEMENT", transcript_message: later.message.name },
    },
    request_id: crypto.randomUUID(),
  });
  check(corrected.revision.replaces_revision_number === "1", "revision 2 replaces revision 1");

  let stale = null;
  try {
    await call(memories, "CorrectMemory", {
      name: created.memory.name,
      etag: created.memory.etag,
      revision: {
        value: "prefers evening meetings",
        provenance: { method: "PROVENANCE_METHOD_USER_STATEMENT", transcript_message: later.message.name },
      },
    });
  } catch (error) {
    stale = error;
  }
  check(stale && stale.code === grpc.status.ABORTED, "a stale etag is ABORTED");
  const info = errorDetails(stale).find((detail) => detail.type === "google.rpc.ErrorInfo");
  check(info && info.reason === "ETAG_MISMATCH", "the ErrorInfo detail names the reason");

  const read = await call(memories, "GetMemory", { name: created.memory.name });
  check(read.memory.applicable_revision.value === "prefers afternoon meetings", "Get sees the correction");

  const built = await call(context, "BuildContext", { conversation });
  const values = built.memories.map((m) => m.memory.applicable_revision.value);
  check(values.includes("prefers afternoon meetings"), "the context holds the applicable revision");
  check(built.recent_messages.length === 2, "the context holds the recent window");

  console.log(JSON.stringify({
    memory: read.memory.name,
    revisions: read.memory.latest_revision.revision_number,
    context_memories: values,
    stale_etag: grpc.status[stale.code],
    stale_reason: info.reason,
    current_etag: info.metadata.current_etag,
    current_memory: errorDetails(stale).find((d) => d.type === "crmmem.memory.v1.Memory").etag,
  }));
}

main().catch((error) => {
  console.error(error.message || error);
  process.exit(1);
});
