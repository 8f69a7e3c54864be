import { recordAudit } from "../../lib/audit";
import { notFound, validation } from "../../lib/errors";
import { newId, nowIso } from "../../lib/ids";
import { OUTBOX_CHANNEL } from "../../lib/outbox";
import { checkLimit } from "../../lib/validate";
import type { ConnectorsCore } from "./core";
import { samplePayload } from "./events";
import { type DeliveryStatus, attemptsOf, deliveriesOf, findDelivery, insertDeliveries, requeueDelivery } from "./store";
import { ACTIONS, type Actor, DELIVERIES_DEFAULT_LIMIT, DELIVERIES_MAX_LIMIT, type Delivery, TEST_WAIT_MS, checkEvents, deliveryShownTo, lockScope, parse, toDelivery } from "./types";

/** A connector's deliveries: the log, retrying one, and test-firing a sample event through the drainer. */
export class ConnectorsDeliveryFlow {
  constructor(private readonly core: ConnectorsCore) {}

  private get ctx() {
    return this.core.ctx;
  }

  /** The delivery log, newest first. */
  async deliveries(projectId: string, id: string, options: { limit?: number; status?: DeliveryStatus; before?: number } = {}, admin = false): Promise<Delivery[]> {
    const limit = options.limit ?? DELIVERIES_DEFAULT_LIMIT;
    checkLimit(limit, DELIVERIES_MAX_LIMIT);
    const row = await this.core.find(this.ctx.store, projectId, id);
    const rows = await deliveriesOf(this.ctx.store, row.id, { limit, status: options.status, before: options.before });
    const attempts = await attemptsOf(this.ctx.store, rows.map((r) => r.id));
    return rows.map((r) => deliveryShownTo(toDelivery(r, attempts), admin));
  }

  async delivery(projectId: string, id: string, deliveryId: string, admin = false): Promise<Delivery> {
    const row = await this.core.find(this.ctx.store, projectId, id);
    const d = await findDelivery(this.ctx.store, row.id, deliveryId);
    if (!d) throw notFound(`Delivery ${deliveryId} not found`);
    return deliveryShownTo(toDelivery(d, await attemptsOf(this.ctx.store, [d.id])), admin);
  }

  /** Makes a delivery due now with a fresh attempt budget (a failed one, or a pending one sooner). */
  async retry(projectId: string, id: string, deliveryId: string, actor: Actor): Promise<Delivery> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.core.find(tx, projectId, id);
      const d = await findDelivery(tx, row.id, deliveryId);
      if (!d) throw notFound(`Delivery ${deliveryId} not found`);
      if (d.status === "delivered") throw validation("The delivery was delivered already", `deliveryId: ${d.id} is delivered; test-fire instead to send again`);
      await requeueDelivery(tx, d.id, Date.now(), nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.retry, subjectId: row.id, subjectName: row.name, actor, detail: { deliveryId: d.id, eventId: d.event_id, previousStatus: d.status } });
      tx.announce(OUTBOX_CHANNEL, d.id);
    });
    // Retrying is the admin role's: the answer shows the whole delivery.
    return this.delivery(projectId, id, deliveryId, true);
  }

  /**
   * Test-fire: a sample event of `type` (default the connector's first
   * subscribed type) queued for this connector only, through the same
   * drainer, signing and adapter as real events; one attempt (a failure is
   * not retried: send it again with the retry endpoint). Waits up to 10 s for
   * that attempt and answers the delivery (`done` false: not attempted yet).
   */
  async testFire(projectId: string, id: string, input: { type?: string; wait?: boolean }, actor: Actor): Promise<{ done: boolean; delivery: Delivery }> {
    if (input.type !== undefined) checkEvents([input.type]);
    const deliveryId = await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.core.find(tx, projectId, id);
      const events = parse<string[]>(row.events, []);
      const type = input.type ?? events[0] ?? "bug.created";
      const deliveryId = newId("dlv");
      const now = nowIso();
      await insertDeliveries(tx, [
        {
          id: deliveryId,
          connectorId: row.id,
          projectId,
          eventId: newId("evt"),
          eventType: type,
          payload: JSON.stringify(samplePayload(type)),
          eventCreatedAt: now,
          test: true,
          nextAttemptAt: Date.now(),
          now,
        },
      ]);
      await recordAudit(tx, { projectId, action: ACTIONS.test, subjectId: row.id, subjectName: row.name, actor, detail: { deliveryId, type } });
      tx.announce(OUTBOX_CHANNEL, deliveryId);
      return deliveryId;
    });
    const deadline = Date.now() + (input.wait === false ? 0 : TEST_WAIT_MS);
    for (;;) {
      const d = await this.delivery(projectId, id, deliveryId, true);
      if (d.log.length > 0 && d.status !== "pending") return { done: true, delivery: d };
      if (Date.now() >= deadline || this.ctx.shutdown.aborted) return { done: false, delivery: d };
      await Bun.sleep(25);
    }
  }
}
