// The bcfg extension: starts `bcfg lsp` over stdio for .bcfg files. Plain CommonJS, no build step.
"use strict";
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

async function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("bcfg")
    .get("command", ["bcfg", "lsp"]);
  const serverOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "bcfg" }],
    synchronize: {
      // Specs changed outside the editor (git checkout, bcfg fmt): the server re-checks their importers.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/*.bcfg"),
    },
  };
  client = new LanguageClient("bcfg", "bcfg", serverOptions, clientOptions);
  await client.start();
  context.subscriptions.push(client);
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
