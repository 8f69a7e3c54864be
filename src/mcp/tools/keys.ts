import { READ_ONLY, defineTool, projectIdArg } from "../tool";

type ListedKey = { id: string; type: string; name: string; scopes: string[]; maskedKey: string; createdAt: string; lastUsedAt: string | null };

export const keyTools = [
  defineTool({
    name: "list_sdk_keys",
    title: "List SDK keys",
    description: "The project's live SDK keys: id, type, name, scopes, a masked tail and when each was created and last used. Never the secrets.",
    input: { project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ project_id }, open) {
      const keys = await open(project_id).request<ListedKey[]>("GET", "/api/admin/keys");
      // Field by field, so a secret can never pass through even if the server sent one.
      return keys.map((k) => ({ id: k.id, type: k.type, name: k.name, scopes: k.scopes, maskedKey: k.maskedKey, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt }));
    },
  }),
];
