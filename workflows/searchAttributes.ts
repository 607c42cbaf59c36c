import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
// The key type is not re-exported from the package index in 1.24 (@temporalio/testing imports it the same way).
import {
  encodeSearchAttributeIndexedValueType,
  type SearchAttributeKey,
} from '@temporalio/common/lib/search-attributes';

/**
 * The custom search attributes of our workflows (docs/operations.md "Queries for the usual questions"): operators list stuck
 * sessions in the Temporal UI by merchant, status, chain and sandbox mode. Workflows upsert them
 * with these keys; the dev server and production namespaces register the same definitions.
 * Pure declarations, safe to import from workflow code.
 */

export const MerchantId = defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD);
export const SessionStatus = defineSearchAttributeKey('SessionStatus', SearchAttributeType.KEYWORD);
export const ChainId = defineSearchAttributeKey('ChainId', SearchAttributeType.INT);
export const SandboxMode = defineSearchAttributeKey('SandboxMode', SearchAttributeType.BOOL);

/** Every custom search attribute a namespace must have before our workflows run there. */
export const SEARCH_ATTRIBUTES: readonly SearchAttributeKey<SearchAttributeType>[] = [
  MerchantId,
  SessionStatus,
  ChainId,
  SandboxMode,
];

/** `NAME=Type` as the Temporal CLI takes it (`Keyword`, `Int`, `Bool`, ...). */
export function searchAttributeDefinition({ name, type }: SearchAttributeKey<SearchAttributeType>): string {
  return `${name}=${TypedSearchAttributes.toMetadataType(type)}`;
}

/** `--search-attribute NAME=Type` pairs that register every custom search attribute on `temporal server start-dev`. */
export function searchAttributeCliArgs(): string[] {
  return SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', searchAttributeDefinition(key)]);
}

/**
 * The definitions missing from a namespace, or registered there with another type, given the
 * `customAttributes` of an OperatorService `listSearchAttributes` answer (name → IndexedValueType enum number).
 */
export function unregisteredSearchAttributes(
  registered: Record<string, number>,
): SearchAttributeKey<SearchAttributeType>[] {
  return SEARCH_ATTRIBUTES.filter(
    ({ name, type }) => registered[name] !== encodeSearchAttributeIndexedValueType(type),
  );
}
