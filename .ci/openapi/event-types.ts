// Compiled by .ci/run with tsc --strict against the types openapi-typescript
// generates from `payd openapi` (payd.d.ts, beside this file in CI's scratch
// directory). It proves that webhook events are typed: Event.data is the
// union of the subjects' schemas and narrows on data.kind. If data regresses
// to a bare object, the @ts-expect-error lines stop being errors and tsc
// fails.
import type { components } from "./payd";

type Event = components["schemas"]["Event"];
type Payment = components["schemas"]["Payment"];

// describe reads each subject through its own type.
export function describe(e: Event): string {
  const d = e.data;
  if (!("kind" in d)) {
    // A test delivery: only the made-up subject's id.
    return `test ${e.type} ${d.id}`;
  }
  switch (d.kind) {
    case "payment":
      return `${e.type}: payment ${d.code} is ${d.status}`;
    case "checkout":
      return `${e.type}: checkout ${d.id} is ${d.status} on ${d.rail}`;
    case "customer":
      return `${e.type}: customer ${d.email ?? d.id}`;
    case "link":
      return `${e.type}: link ${d.code} at ${d.url}`;
  }
  const never: never = d;
  return never;
}

// paymentOf narrows without a switch.
export function paymentOf(e: Event): Payment | undefined {
  return "kind" in e.data && e.data.kind === "payment" ? e.data : undefined;
}

export function unnarrowed(e: Event): void {
  // @ts-expect-error status exists on a payment or a checkout, not on every subject.
  void e.data.status;
  // @ts-expect-error a checkout is not a payment.
  const p: Payment = e.data as components["schemas"]["Checkout"];
  void p;
}
