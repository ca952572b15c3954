// A second-language client built from the same protos: creates, corrects and reads a memory and
// builds a context against a running memory service. Prints one JSON summary; exits non-zero on
// any mismatch. Environment: MEMORY_ADDRESS, MEMORY_TOKEN.
"use strict";

const path = require("node:path");
const crypto = require("node:crypto");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOS = path.resolve(__dirname, "../../protos");
const definition = protoLoader.loadSync(
  ["crmmem/memory/v1/memory_service.proto", "crmmem/memory/v1/transcript_service.proto",
   "crmmem/memory/v1/context_service.proto"],
  { includeDirs: [PROTOS], keepCase: true, longs: String, enums: String, defaults: true },
);
const v1 = grpc.loadPackageDefinition(definition).crmmem.memory.v1;

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
  }));
}

main().catch((error) => {
  console.error(error.message || error);
  process.exit(1);
});
