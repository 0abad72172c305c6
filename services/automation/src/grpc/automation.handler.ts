import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { appointmentReminders } from '../appointment-reminders';
import { campaigns, draftsUsingTemplate, suppressions } from '../campaigns';
import { emailChannel } from '../email-channel';
import { notifications } from '../notifications';
import { rulesUsingTemplate } from '../rule-definitions';
import { rules } from '../rules';
import { templates, type TemplateUsers } from '../templates';

/** automation.v1.AutomationService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function automationHandlers(deps: Deps): HandlersFor<'automation.v1.AutomationService'> {
  const templateUsers: TemplateUsers = { rules: rulesUsingTemplate, draftCampaigns: draftsUsingTemplate };
  return {
    ListRules: (req, ctx) => rules.list(deps, ctx, req),
    GetRule: (req, ctx) => rules.get(deps, ctx, req.id),
    CreateRule: (req, ctx) => rules.create(deps, ctx, req),
    UpdateRule: (req, ctx) => rules.update(deps, ctx, req),
    ActivateRule: (req, ctx) => rules.activate(deps, ctx, req.id),
    PauseRule: (req, ctx) => rules.pause(deps, ctx, req.id),
    DeleteRule: (req, ctx) => rules.remove(deps, ctx, req.id),
    ListRuleRuns: (req, ctx) => rules.listRuns(deps, ctx, req),
    GetRun: (req, ctx) => rules.getRun(deps, ctx, req.id),
    RotateRuleSecret: (req, ctx) => rules.rotateSecret(deps, ctx, req.id),
    RunRule: (req, ctx) => rules.runNow(deps, ctx, req),

    ListTemplates: (req, ctx) => templates.list(deps, ctx, req),
    GetTemplate: (req, ctx) => templates.get(deps, ctx, req.id),
    CreateTemplate: (req, ctx) => templates.create(deps, ctx, req),
    UpdateTemplate: (req, ctx) => templates.update(deps, ctx, req),
    DeleteTemplate: (req, ctx) => templates.remove(deps, ctx, req.id, templateUsers),

    ListCampaigns: (req, ctx) => campaigns.list(deps, ctx, req),
    GetCampaign: (req, ctx) => campaigns.get(deps, ctx, req.id),
    CreateCampaign: (req, ctx) => campaigns.create(deps, ctx, req),
    UpdateCampaign: (req, ctx) => campaigns.update(deps, ctx, req),
    ScheduleCampaign: (req, ctx) => campaigns.schedule(deps, ctx, req),
    ActivateCampaign: (req, ctx) => campaigns.activate(deps, ctx, req.id),
    PauseCampaign: (req, ctx) => campaigns.pause(deps, ctx, req.id),
    CancelCampaign: (req, ctx) => campaigns.cancel(deps, ctx, req.id),
    ListCampaignRecipients: (req, ctx) => campaigns.recipients(deps, ctx, req),

    ListNotifications: (req, ctx) => notifications.list(deps, ctx, req),
    MarkNotificationRead: (req, ctx) => notifications.markRead(deps, ctx, req.id),
    GetAppointmentSettings: (_req, ctx) => appointmentReminders.getSettings(deps, ctx),
    UpdateAppointmentSettings: (req, ctx) => appointmentReminders.updateSettings(deps, ctx, req),
    MarkAllNotificationsRead: (_req, ctx) => notifications.markAllRead(deps, ctx),

    GetEmailChannel: (_req, ctx) => emailChannel.getChannel(deps, ctx),
    UpdateEmailChannel: (req, ctx) => emailChannel.updateChannel(deps, ctx, req),
    DeleteEmailChannel: (_req, ctx) => emailChannel.deleteChannel(deps, ctx),
    TestEmailChannel: (req, ctx) => emailChannel.testChannel(deps, ctx, req),
    ListEmailSuppressions: (req, ctx) => suppressions.list(deps, ctx, req),
    DeleteEmailSuppression: (req, ctx) => suppressions.remove(deps, ctx, req),
    // Public links: no user or org in the call; the signed token is checked instead.
    CheckUnsubscribeLink: (req) => suppressions.checkUnsubscribeLink(deps, req),
    UnsubscribeEmail: (req, ctx) => suppressions.unsubscribe(deps, ctx, req),
    RecordEmailOpen: (req) => suppressions.recordOpen(deps, req),
    RenewGrant: async (req, ctx) => {
      await deps.grants.renew(ctx, req.grant);
      return { ok: true };
    },
  };
}
