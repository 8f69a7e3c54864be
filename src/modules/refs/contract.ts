import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { BRANCH_MAX, COMMIT_MAX, FILE_MAX, FLAG_MAX, LINE_MAX, PUSH_MAX_REFS, REPO_MAX } from "./types";

const Kind = t.Union([t.Literal("sdk"), t.Literal("string")], { description: "sdk: an SDK call names the flag; string: the name as a quoted string literal elsewhere" });
const Commit = t.String({ minLength: 1, maxLength: COMMIT_MAX, pattern: "^[A-Za-z0-9._-]+$", description: "The commit scanned (git rev-parse HEAD)" });

export const PushRefsBody = BodyObject(
  {
    repo: t.String({ minLength: 1, maxLength: REPO_MAX, description: "The repository's name, e.g. github.com/acme/shop; a push replaces that repository's references" }),
    branch: t.Optional(t.Union([t.String({ minLength: 1, maxLength: BRANCH_MAX }), t.Null()])),
    commit: Commit,
    refs: t.Array(
      BodyObject({
        flag: t.String({ minLength: 1, maxLength: FLAG_MAX }),
        file: t.String({ minLength: 1, maxLength: FILE_MAX, description: "Path from the repository's root, stored and shown as text" }),
        line: Integer({ minimum: 1, maximum: LINE_MAX }),
        kind: Kind,
      }),
      { maxItems: PUSH_MAX_REFS },
    ),
  },
  {
    examples: [
      {
        repo: "github.com/acme/shop",
        branch: "main",
        commit: "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a",
        refs: [
          { flag: "checkout", file: "web/src/cart.tsx", line: 42, kind: "sdk" },
          { flag: "checkout", file: "api/handlers/pay.go", line: 118, kind: "sdk" },
          { flag: "new-search", file: "config/flags.yml", line: 7, kind: "string" },
        ],
      },
    ],
  },
);

export const RepoSchema = t.Object(
  {
    repo: t.String(),
    branch: t.Union([t.String(), t.Null()]),
    commit: t.String(),
    refs: Integer({ description: "References in the last push" }),
    flags: Integer({ description: "Distinct flag names among them" }),
    pushedAt: t.String(),
    pushedBy: t.String(),
  },
  {
    title: "CodeRefRepo",
    examples: [{ repo: "github.com/acme/shop", branch: "main", commit: "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a", refs: 3, flags: 2, pushedAt: "2026-11-28T09:12:44.120Z", pushedBy: "api-token:ci@tokens.local" }],
  },
);

export const FlagRefsSchema = t.Object(
  {
    flag: t.Union([t.String(), t.Null()], { description: "The flag asked for; null: every flag" }),
    total: Integer({ description: "References in every pushed repository" }),
    truncated: t.Boolean({ description: "true when refs lists only the first 1,000" }),
    reposPushed: Integer({ description: "Repositories of the project with references pushed (0: nothing is known about the code)" }),
    repos: t.Array(t.Object({ repo: t.String(), commit: t.String(), branch: t.Union([t.String(), t.Null()]), pushedAt: t.String(), count: Integer() })),
    refs: t.Array(t.Object({ flag: t.String(), repo: t.String(), branch: t.Union([t.String(), t.Null()]), commit: t.String(), file: t.String(), line: Integer(), kind: Kind, pushedAt: t.String() })),
  },
  {
    title: "FlagRefs",
    examples: [
      {
        flag: "checkout",
        total: 2,
        truncated: false,
        reposPushed: 1,
        repos: [{ repo: "github.com/acme/shop", commit: "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a", branch: "main", pushedAt: "2026-11-28T09:12:44.120Z", count: 2 }],
        refs: [
          { flag: "checkout", repo: "github.com/acme/shop", branch: "main", commit: "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a", file: "api/handlers/pay.go", line: 118, kind: "sdk", pushedAt: "2026-11-28T09:12:44.120Z" },
          { flag: "checkout", repo: "github.com/acme/shop", branch: "main", commit: "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a", file: "web/src/cart.tsx", line: 42, kind: "sdk", pushedAt: "2026-11-28T09:12:44.120Z" },
        ],
      },
    ],
  },
);

export const FlagRefsQuery = QueryObject({ flag: t.Optional(t.String({ minLength: 1, maxLength: FLAG_MAX, description: "A killswitch, gate, config or experiment name; without it, every reference of the project" })) });
export const RepoParam = t.Object({ repo: t.String({ minLength: 1, maxLength: REPO_MAX, description: "The repository's name, URL-encoded (github.com%2Facme%2Fshop)" }) });
