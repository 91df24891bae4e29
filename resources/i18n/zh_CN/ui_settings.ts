<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>ChannelDialog</name>
    <message>
        <source>Budget crossed</source>
        <translation>预算提醒</translation>
    </message>
    <message>
        <source>Planned runtime</source>
        <translation>计划运行时长</translation>
    </message>
    <message>
        <source>Left on overnight</source>
        <translation>整夜未关</translation>
    </message>
    <message>
        <source>Idle GPUs</source>
        <translation>GPU 空闲</translation>
    </message>
    <message>
        <source>Spot without a checkpoint</source>
        <translation>竞价实例没有检查点</translation>
    </message>
    <message>
        <source>Auto-release countdown and outcome</source>
        <translation>自动释放倒计时及结果</translation>
    </message>
    <message>
        <source>Host stopped answering</source>
        <translation>主机无响应</translation>
    </message>
    <message>
        <source>Forgotten instance at a provider</source>
        <translation>平台上遗忘的实例</translation>
    </message>
    <message>
        <source>Instance gone at a provider</source>
        <translation>实例已在平台上消失</translation>
    </message>
    <message>
        <source>Releases</source>
        <translation>实例释放</translation>
    </message>
    <message>
        <source>Everything else</source>
        <translation>其他所有提醒</translation>
    </message>
    <message>
        <source>Edit {0}</source>
        <translation>编辑 {0}</translation>
    </message>
    <message>
        <source>Add {0} channel</source>
        <translation>添加 {0} 通知渠道</translation>
    </message>
    <message>
        <source>Name (optional)</source>
        <translation>名称（可选）</translation>
    </message>
    <message>
        <source>e.g. 23:00-07:00 (money-critical alerts still come)</source>
        <translation>例如 23:00-07:00（涉及费用的紧急提醒仍会发送）</translation>
    </message>
    <message>
        <source>Quiet hours</source>
        <translation>免打扰时段</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>An updated alert again at most every</source>
        <translation>同一提醒更新后的最短重发间隔</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送哪些提醒</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>https://ntfy.sh (or your own)</source>
        <translation>https://ntfy.sh（或你自己的服务器）</translation>
    </message>
    <message>
        <source>Topic</source>
        <translation>主题</translation>
    </message>
    <message>
        <source>a long, hard-to-guess name, e.g. gpu-7fk2q9</source>
        <translation>一个够长、难以猜到的名称，例如 gpu-7fk2q9</translation>
    </message>
    <message>
        <source>Access token (optional)</source>
        <translation>访问令牌（可选）</translation>
    </message>
    <message>
        <source>Webhook URL</source>
        <translation>Webhook 地址</translation>
    </message>
    <message>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <source>Signing secret (optional)</source>
        <translation>签名密钥（可选）</translation>
    </message>
    <message>
        <source>SMTP server</source>
        <translation>SMTP 服务器</translation>
    </message>
    <message>
        <source>none</source>
        <comment>SMTP security: no encryption</comment>
        <translation>不加密</translation>
    </message>
    <message>
        <source>Security</source>
        <translation>加密方式</translation>
    </message>
    <message>
        <source>default (587 / 465 / 25)</source>
        <translation>默认（587 / 465 / 25）</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户名</translation>
    </message>
    <message>
        <source>alerts@example.com</source>
        <translation>alerts@example.com</translation>
    </message>
    <message>
        <source>Password</source>
        <translation>密码</translation>
    </message>
    <message>
        <source>From</source>
        <translation>发件人</translation>
    </message>
    <message>
        <source>To</source>
        <translation>收件人</translation>
    </message>
    <message>
        <source>you@example.com (several: comma-separated)</source>
        <translation>you@example.com（多个地址用英文逗号分隔）</translation>
    </message>
    <message>
        <source>Choose at least one kind of alert to send.</source>
        <translation>请至少选择一种要发送的提醒。</translation>
    </message>
</context>
<context>
    <name>LanguageSection</name>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>As the system ({language})</source>
        <translation>跟随系统（{language}）</translation>
    </message>
    <message>
        <source>Applies at the next start; --lang overrides it for one run.</source>
        <translation>下次启动时生效；单次运行可用 --lang 参数临时指定。</translation>
    </message>
    <message>
        <source>Saved. Restart GPU Companion to switch the language.</source>
        <translation>已保存。重启 GPU Companion 即可切换语言。</translation>
    </message>
</context>
<context>
    <name>NotifySection</name>
    <message>
        <source>%d %b %H:%M</source>
        <extracomment>a strftime format (day, month, time); Chinese e.g. &quot;%m-%d %H:%M&quot;</extracomment>
        <translation>%m-%d %H:%M</translation>
    </message>
    <message>
        <source>failing: {error}; next try {when}</source>
        <translation>发送失败：{error}；下次重试 {when}</translation>
    </message>
    <message>
        <source>failing: {error}</source>
        <translation>发送失败：{error}</translation>
    </message>
    <message>
        <source>sent {when}</source>
        <translation>已于 {when} 发送</translation>
    </message>
    <message>
        <source>{n} waiting</source>
        <translation>{n} 条等待中</translation>
    </message>
    <message>
        <source>{n} given up</source>
        <translation>{n} 条已放弃</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>nothing sent yet</source>
        <translation>尚未发送任何消息</translation>
    </message>
    <message>
        <source>When you are away: where alerts go</source>
        <translation>离开时：提醒发往何处</translation>
    </message>
    <message>
        <source>Budget alerts, auto-release countdowns, forgotten instances and hosts that stop answering are sent here too, by whichever GPU Companion runs the rules (this window or `gpu-companion watch`). A phone in five minutes: install the ntfy app, subscribe to a topic of your own, add it here and press Send test.</source>
        <translation>预算提醒、自动释放倒计时、遗忘的实例以及停止响应的主机也会发送到这里，由正在运行这些规则的 GPU Companion（本窗口或 `gpu-companion watch`）发送。五分钟接入手机：安装 ntfy 应用，订阅一个你自己的主题，在这里添加它，然后点击“发送测试”。</translation>
    </message>
    <message>
        <source>Channel</source>
        <translation>渠道</translation>
    </message>
    <message>
        <source>Sends to</source>
        <translation>发送到</translation>
    </message>
    <message>
        <source>Quiet hours</source>
        <translation>免打扰时段</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Add ▾</source>
        <translation>添加 ▾</translation>
    </message>
    <message>
        <source>ntfy (phone app)…</source>
        <translation>ntfy（手机应用）…</translation>
    </message>
    <message>
        <source>Webhook (Slack, Discord, Feishu, DingTalk)…</source>
        <translation>Webhook（Slack、Discord、飞书、钉钉）…</translation>
    </message>
    <message>
        <source>E-mail…</source>
        <translation>电子邮件…</translation>
    </message>
    <message>
        <source>Desktop notifications…</source>
        <translation>桌面通知…</translation>
    </message>
    <message>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <source>Send test</source>
        <translation>发送测试</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>{channel} (off)</source>
        <translation>{channel}（已停用）</translation>
    </message>
    <message>
        <source>Added {channel}: press Send test to try it.</source>
        <translation>已添加 {channel}：点击“发送测试”试一试。</translation>
    </message>
    <message>
        <source>Saved {channel}.</source>
        <translation>已保存 {channel}。</translation>
    </message>
    <message>
        <source>Removed {channel}; its secrets left the keyring.</source>
        <translation>已移除 {channel}；它的机密信息已从系统密钥环中删除。</translation>
    </message>
    <message>
        <source>Sending a test message through {channel} …</source>
        <translation>正在通过 {channel} 发送测试消息…</translation>
    </message>
    <message>
        <source>{channel}: {result}</source>
        <translation>{channel}：{result}</translation>
    </message>
    <message>
        <source>{channel} failed: {result}</source>
        <translation>{channel} 发送失败：{result}</translation>
    </message>
</context>
<context>
    <name>SettingsPage</name>
    <message>
        <source>Start-up</source>
        <translation>启动</translation>
    </message>
    <message>
        <source>Start GPU Companion in the tray when I log in</source>
        <translation>登录时在托盘中启动 GPU Companion</translation>
    </message>
    <message>
        <source>Check this computer…</source>
        <translation>检查本机…</translation>
    </message>
    <message>
        <source>Keyring, ssh, ssh-agent and rsync, and how to install them:</source>
        <translation>系统密钥环、ssh、ssh-agent 和 rsync，以及它们的安装方法：</translation>
    </message>
    <message>
        <source>Where GPU Companion keeps its files</source>
        <translation>GPU Companion 的文件存放位置</translation>
    </message>
    <message>
        <source>Data (database)</source>
        <translation>数据（数据库）</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>About</source>
        <translation>关于</translation>
    </message>
    <message>
        <source>GPU Companion {version}. Private keys live only in your system keyring; the app never stores them in plain files. The colour theme follows your system.</source>
        <translation>GPU Companion {version}。私钥只保存在系统密钥环中，应用从不把它们存为明文文件。配色主题跟随系统。</translation>
    </message>
    <message>
        <source>Terminal</source>
        <translation>终端</translation>
    </message>
    <message>
        <source>Open terminals in</source>
        <translation>终端程序</translation>
    </message>
    <message>
        <source>e.g. kitty -- {ssh}   or   wezterm ssh {alias}</source>
        <translation>例如 kitty -- {ssh}   或   wezterm ssh {alias}</translation>
    </message>
    <message>
        <source>The program and its arguments, split like a shell would but never run by one. {ssh} is the ssh command (ssh ALIAS, or with the tmux session), {alias} the host.</source>
        <translation>要运行的程序及其参数：按命令行的规则拆分，但从不交给命令解释器运行。{ssh} 是 ssh 命令（ssh 别名，或附带 tmux 会话），{alias} 是主机别名。</translation>
    </message>
    <message>
        <source>Custom command</source>
        <translation>自定义命令</translation>
    </message>
    <message>
        <source>“Open terminal in tmux” attaches to this session on the host (made if missing), so a dropped link does not stop the work.</source>
        <translation>“在 tmux 中打开终端”会连接到主机上的这个会话（不存在时自动创建），这样连接断开也不会中断工作。</translation>
    </message>
    <message>
        <source>tmux session</source>
        <translation>tmux 会话</translation>
    </message>
    <message>
        <source>{terminal} (not found)</source>
        <translation>{terminal}（未找到）</translation>
    </message>
    <message>
        <source>Give the command: {ssh} is replaced by the ssh command, {alias} by the host.</source>
        <translation>请填写命令：{ssh} 会替换为 ssh 命令，{alias} 替换为主机别名。</translation>
    </message>
    <message>
        <source>Not saved: {error}</source>
        <translation>未保存：{error}</translation>
    </message>
    <message>
        <source>Saved: “Open terminal” runs this command.</source>
        <translation>已保存：“打开终端”将运行此命令。</translation>
    </message>
    <message>
        <source>Saved: terminals attach to tmux session “{name}”.</source>
        <translation>已保存：终端将连接到 tmux 会话“{name}”。</translation>
    </message>
    <message>
        <source>Could not change start at login ({location}): {error}</source>
        <translation>无法更改登录时启动（{location}）：{error}</translation>
    </message>
    <message>
        <source>Entry: {path}</source>
        <translation>启动项：{path}</translation>
    </message>
    <message>
        <source>Would be written to {path}</source>
        <translation>将写入 {path}</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
</context>
</TS>
