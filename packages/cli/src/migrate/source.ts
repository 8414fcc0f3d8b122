import { redactUrl, StoreUnavailableError, type LegacyDocument } from '@hortus/core';
import { type Db, type Document, type FindCursor, MongoClient } from 'mongodb';
import { UsageError } from '../exit-codes.js';

const DEFAULT_SOURCE_TIMEOUT_MS = 5000;

/** Hosts and database of a URI, without credentials or options: names a database across runs. */
export function databaseName(uri: string, dbName: string): string {
  const hosts = /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]*)/u.exec(uri)?.[1] ?? '';
  return `${hosts.toLowerCase()}/${dbName}`;
}

/** Connects to the original's database; unreachable is exit 5, a malformed URI exit 2. */
export async function openSource(uri: string): Promise<{ client: MongoClient; db: Db }> {
  if (!/^mongodb(\+srv)?:\/\/\S+$/u.test(uri)) {
    throw new UsageError('--from must be a MongoDB URI: mongodb://host:27017/<database of the original>');
  }
  let client: MongoClient;
  try {
    client = new MongoClient(uri, {
      appName: 'hortus-migrate',
      ...(/[?&]serverSelectionTimeoutMS=/iu.test(uri)
        ? {}
        : { serverSelectionTimeoutMS: DEFAULT_SOURCE_TIMEOUT_MS }),
    });
  } catch (error) {
    throw new UsageError(`--from is not a usable MongoDB URI: ${(error as Error).message}`);
  }
  try {
    await client.connect();
    return { client, db: client.db() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new StoreUnavailableError(
      `cannot reach the source database at ${redactUrl(uri, 'path')}: ${(error as Error).message}`,
    );
  }
}

export async function readBatch(cursor: FindCursor<Document>, size: number): Promise<LegacyDocument[]> {
  const documents: LegacyDocument[] = [];
  while (documents.length < size && (await cursor.hasNext())) {
    documents.push(...cursor.readBufferedDocuments(size - documents.length));
  }
  return documents;
}
