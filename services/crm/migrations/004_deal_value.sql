-- The value of a contact's deal (money, in the organization's currency; 2 decimals). Revenue in reports is the
-- sum of it over customers. Adding a column with a constant default rewrites nothing (PostgreSQL 11+).
ALTER TABLE contacts ADD COLUMN deal_value numeric(14, 2) NOT NULL DEFAULT 0
  CONSTRAINT contacts_deal_value_nonnegative CHECK (deal_value >= 0);
