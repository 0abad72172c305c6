import { DeliverySlots } from './delivery-slots';

const rows = (...endpoints: string[]) => endpoints.map((webhook_id) => ({ webhook_id }));

describe('DeliverySlots: slots per endpoint', () => {
  it('gives an endpoint as many slots as its bound, then refuses until one is given back', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    expect(slots.tryTake('a')).toBe(true);
    expect(slots.tryTake('a')).toBe(true);
    expect(slots.tryTake('a')).toBe(false);
    expect(slots.tryTake('b')).toBe(true);
    expect(slots.inFlightTo('a')).toBe(2);
    slots.release('a');
    expect(slots.tryTake('a')).toBe(true);
    expect(slots.tryTake('a')).toBe(false);
  });

  it('forgets an endpoint once its last slot is given back, and never counts below zero', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 4 });
    slots.take('a');
    slots.take('a');
    expect([...slots.busy]).toEqual([['a', 2]]);
    slots.release('a');
    expect([...slots.busy]).toEqual([['a', 1]]);
    slots.release('a');
    expect(slots.busy.size).toBe(0);
    slots.release('a');
    expect(slots.busy.size).toBe(0);
    expect(slots.inFlightTo('a')).toBe(0);
  });

  it('counts a claimed row even past the bound (the claim kept to it), and lists endpoints at their bound as full', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 1 });
    slots.take('a');
    slots.take('a');
    slots.take('b');
    expect(slots.inFlightTo('a')).toBe(2);
    expect(slots.full().sort()).toEqual(['a', 'b']);
    slots.release('b');
    expect(slots.full()).toEqual(['a']);
  });

  it('says a freed slot is worth a claim only when its endpoint was heard of or a general claim is wanted', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    slots.take('a');
    slots.take('a');
    expect(slots.release('a')).toBe(false);
    slots.hint('a', 3);
    expect(slots.release('a')).toBe(true);
    slots.take('b');
    expect(slots.release('b')).toBe(false);
    slots.want();
    slots.take('b');
    expect(slots.release('b')).toBe(true);
  });
});

describe('DeliverySlots: what was heard of', () => {
  it('adds announcements by endpoint up, in the order endpoints were first heard of', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 8 });
    expect(slots.left).toBe(false);
    slots.announce({ webhookId: 'b', ids: ['1', '2'] });
    slots.announce({ webhookId: 'a', ids: ['3'] });
    slots.announce({ webhookId: 'b', ids: ['4'] });
    slots.announce({ webhookId: 'c', ids: [] });
    expect(slots.heardOf()).toEqual(['b', 'a']);
    expect(slots.left).toBe(true);
    const plan = slots.planEndpointClaims(100, 0);
    expect([...plan.heard]).toEqual([
      ['b', 3],
      ['a', 1],
    ]);
  });

  it('keeps ids of no endpoint oldest first and hands them out once', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 8 });
    slots.announce({ ids: ['1', '2', '3'] });
    slots.announce({ ids: ['2', '4'] });
    expect(slots.unplacedCount).toBe(4);
    expect(slots.left).toBe(true);
    expect(slots.takeUnplaced(3)).toEqual(['1', '2', '3']);
    expect(slots.takeUnplaced(3)).toEqual(['4']);
    expect(slots.unplacedCount).toBe(0);
    expect(slots.left).toBe(false);
  });

  it('drops the ids of no endpoint past the cap and asks for a general claim instead', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 8, maxAnnounced: 3 });
    slots.announce({ ids: ['1', '2'] });
    expect(slots.takeWanted()).toBe(false);
    slots.announce({ ids: ['3', '4'] });
    expect(slots.unplacedCount).toBe(0);
    expect(slots.left).toBe(true);
    expect(slots.takeWanted()).toBe(true);
    expect(slots.takeWanted()).toBe(false);
    expect(slots.left).toBe(false);
  });
});

describe('DeliverySlots: claims by endpoint', () => {
  it('asks each endpoint heard of for its free slots, within the instance’s free slots, skipping full ones', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 4 });
    for (let i = 0; i < 4; i++) slots.take('full');
    slots.hint('full', 10);
    slots.hint('a', 10);
    slots.hint('b', 10);
    slots.hint('c', 10);
    const plan = slots.planEndpointClaims(6, 0);
    expect([...plan.wants]).toEqual([
      ['a', 4],
      ['b', 2],
    ]);
    expect(plan.gatherLater).toBe(false);
    // Planned endpoints leave the hints until the claim says what it got; the others stay.
    expect(slots.heardOf()).toEqual(['full', 'c']);
  });

  it('keeps an endpoint that gave all it was asked for with what remains, and forgets one that gave fewer', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    slots.hint('a', 5);
    slots.hint('b', 1);
    slots.hint('c', 2);
    const plan = slots.planEndpointClaims(10, 0);
    expect([...plan.wants]).toEqual([
      ['a', 2],
      ['b', 2],
      ['c', 2],
    ]);
    slots.claimedByEndpoint(plan, rows('a', 'a', 'c'));
    expect(slots.inFlightTo('a')).toBe(2);
    expect(slots.inFlightTo('b')).toBe(0);
    expect(slots.inFlightTo('c')).toBe(1);
    // a gave the 2 asked for (3 of 5 heard of remain); b and c gave fewer than asked for: none due, forgotten.
    expect(slots.heardOf()).toEqual(['a']);
    slots.release('a');
    slots.release('a');
    expect([...slots.planEndpointClaims(10, 0).heard]).toEqual([['a', 3]]);
  });

  it('lets endpoints take turns: one served moves behind those the instance had no room for', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    slots.hint('a', 5);
    slots.hint('b', 5);
    const plan = slots.planEndpointClaims(2, 0);
    expect([...plan.wants]).toEqual([['a', 2]]);
    slots.claimedByEndpoint(plan, rows('a', 'a'));
    expect(slots.heardOf()).toEqual(['b', 'a']);
  });

  it('keeps an endpoint heard of (at least once) when it gave exactly what it was asked for and no more was heard', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    slots.hint('a', 2);
    const plan = slots.planEndpointClaims(10, 0);
    slots.claimedByEndpoint(plan, rows('a', 'a'));
    expect(slots.heardOf()).toEqual(['a']);
    slots.release('a');
    slots.release('a');
    expect([...slots.planEndpointClaims(10, 0).heard]).toEqual([['a', 1]]);
  });

  it('puts back what was heard of when the claim fails', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    slots.hint('a', 3);
    slots.hint('b', 1);
    const plan = slots.planEndpointClaims(10, 0);
    expect(slots.left).toBe(false);
    slots.hint('a', 1);
    slots.endpointClaimFailed(plan);
    expect(slots.busy.size).toBe(0);
    expect([...slots.planEndpointClaims(10, 0).heard]).toEqual([
      ['a', 4],
      ['b', 1],
    ]);
  });

  it('gathers the free slots of an endpoint with a backlog: half its slots, or the backlog wait', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 8, backlogClaimWaitMs: 5 });
    for (let i = 0; i < 8; i++) slots.take('a');
    slots.hint('a', 100);
    slots.release('a');
    // One slot of eight free, a backlog: wait.
    let plan = slots.planEndpointClaims(50, 1000);
    expect(plan.wants.size).toBe(0);
    expect(plan.gatherLater).toBe(true);
    expect(slots.heardOf()).toEqual(['a']);
    // Still within the wait.
    plan = slots.planEndpointClaims(50, 1004);
    expect(plan.wants.size).toBe(0);
    expect(plan.gatherLater).toBe(true);
    // The wait is over: claim what is free.
    slots.release('a');
    plan = slots.planEndpointClaims(50, 1005);
    expect([...plan.wants]).toEqual([['a', 2]]);
    expect(plan.gatherLater).toBe(false);
  });

  it('claims for an endpoint with a backlog at once when half its slots are free, and starts a fresh wait after', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 8, backlogClaimWaitMs: 5 });
    for (let i = 0; i < 8; i++) slots.take('a');
    slots.hint('a', 100);
    slots.release('a');
    expect(slots.planEndpointClaims(50, 0).gatherLater).toBe(true);
    for (let i = 0; i < 3; i++) slots.release('a');
    let plan = slots.planEndpointClaims(50, 1);
    expect([...plan.wants]).toEqual([['a', 4]]);
    slots.claimedByEndpoint(plan, rows('a', 'a', 'a', 'a'));
    slots.release('a');
    // A new wait starts from here, not from the first one.
    plan = slots.planEndpointClaims(50, 100);
    expect(plan.wants.size).toBe(0);
    expect(plan.gatherLater).toBe(true);
  });

  it('does not gather for an idle endpoint or one with no more heard of than it has free slots', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 8 });
    slots.hint('idle', 100);
    slots.take('small');
    slots.take('small');
    slots.hint('small', 2);
    const plan = slots.planEndpointClaims(50, 0);
    expect([...plan.wants]).toEqual([
      ['idle', 8],
      ['small', 6],
    ]);
    expect(plan.gatherLater).toBe(false);
  });
});

describe('DeliverySlots: the general claim', () => {
  it('is wanted until a claim takes the wish', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    expect(slots.takeWanted()).toBe(false);
    slots.want();
    slots.want();
    expect(slots.left).toBe(true);
    expect(slots.takeWanted()).toBe(true);
    expect(slots.takeWanted()).toBe(false);
  });

  it('leaves the endpoints it could not look at, or filled, to claims by endpoint', () => {
    const slots = new DeliverySlots({ endpointConcurrency: 2 });
    slots.take('full');
    slots.take('full');
    slots.hint('heard', 3);
    const full = slots.full();
    const claimed = rows('b', 'b', 'c', 'heard', 'heard');
    for (const r of claimed) slots.take(r.webhook_id);
    slots.afterGeneralClaim(full, claimed);
    // full: heard of once; b filled: heard of once; c has a free slot: not heard of; heard: keeps its count.
    expect(slots.heardOf()).toEqual(['heard', 'full', 'b']);
    for (const e of ['full', 'full', 'b', 'b', 'heard', 'heard']) slots.release(e);
    expect([...slots.planEndpointClaims(50, 0).heard]).toEqual([
      ['heard', 3],
      ['full', 1],
      ['b', 1],
    ]);
  });
});
