import { reportQuery } from './report-query';
import { validateReportRequest } from './report-request';

describe('report query', () => {
  const spec = (body: object) =>
    validateReportRequest({ name: 'R', metrics: ['revenue'], dateFrom: '2024-05-01', dateTo: '2024-05-31', filtersJson: '[]', ...body }, 'VN').spec;

  it('keeps every value out of the SQL text: org, range and filter values are parameters', () => {
    const evil = "x'); DROP TABLE contacts; --";
    const s = spec({
      metrics: ['lead_count', 'messages_sent'],
      dimensions: ['source', 'week'],
      filtersJson: JSON.stringify([{ field: 'name', operator: 'contains', value: evil }]),
    });
    const q = reportQuery('org-1', s);
    expect(q.text).not.toContain('DROP');
    expect(q.text).not.toContain('org-1');
    // Both parts (contacts, messages) carry the filter.
    expect(q.values).toEqual([
      'org-1',
      '2024-05-01T00:00:00.000Z',
      '2024-06-01T00:00:00.000Z',
      "%x'); drop table contacts; --%",
      "%x'); drop table contacts; --%",
    ]);
  });

  it('queries messages only when a message metric is asked for', () => {
    expect(reportQuery('o', spec({ metrics: ['revenue'] })).text).not.toContain('contact_activities');
    expect(reportQuery('o', spec({ metrics: ['messages_received'] })).text).not.toContain('count(*) AS leads');
  });

  it('a date covers its whole UTC day; a timestamp is exact and inclusive', () => {
    expect(spec({ dateFrom: '2024-05-01', dateTo: '2024-05-01' })).toEqual(
      expect.objectContaining({ from: '2024-05-01T00:00:00.000Z', to: '2024-05-02T00:00:00.000Z' }),
    );
    expect(spec({ dateFrom: '2024-05-01T10:00:00Z', dateTo: '2024-05-01T12:00:00+02:00' })).toEqual(
      expect.objectContaining({ from: '2024-05-01T10:00:00.000Z', to: '2024-05-01T10:00:00.001Z' }),
    );
  });
});
