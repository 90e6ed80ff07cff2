<?php
/**
 * The plugin's options and the Settings → Strata page.
 *
 * @package StrataAnalytics
 */

defined( 'ABSPATH' ) || exit;

/**
 * Registers, sanitises, reads and shows the three options: the product's
 * API key, the Strata server's URL, and whether AI bots are tracked.
 *
 * The page goes through WordPress's Settings API: the form posts to
 * options.php, which checks the nonce settings_fields() prints and the
 * manage_options capability, then runs each option's sanitize_callback
 * before storing it.
 */
final class Strata_Analytics_Settings {

	/** The group settings_fields() names, and the page's slug. */
	const GROUP = 'strata_analytics';
	const PAGE  = 'strata-analytics';

	/** Option names. */
	const API_KEY    = 'strata_analytics_api_key';
	const HOST       = 'strata_analytics_host';
	const TRACK_BOTS = 'strata_analytics_track_bots';

	/** Whether AI bots are tracked when the option was never stored: on. */
	const TRACK_BOTS_DEFAULT = '1';

	/**
	 * A Strata API key: st_live_ or st_test_ and 32 base-62 characters
	 * (internal/auth/credentials.go).
	 */
	const KEY_PATTERN = '/^st_(live|test)_[0-9A-Za-z]{32}$/';

	/**
	 * Hooks the page and the settings into the admin.
	 *
	 * @param string $plugin_basename The main file's basename, for the Settings link.
	 */
	public static function register( $plugin_basename ) {
		add_action( 'admin_init', array( __CLASS__, 'register_settings' ) );
		add_action( 'admin_menu', array( __CLASS__, 'add_page' ) );
		add_filter( 'plugin_action_links_' . $plugin_basename, array( __CLASS__, 'action_links' ) );
	}

	/**
	 * Stores the defaults on activation. add_option keeps a value that is
	 * already there, so reactivating never turns bot tracking back on.
	 */
	public static function activate() {
		add_option( self::TRACK_BOTS, self::TRACK_BOTS_DEFAULT );
	}

	/** The option names, for uninstall.php. */
	public static function option_names() {
		return array( self::API_KEY, self::HOST, self::TRACK_BOTS );
	}

	/** Registers the options with the Settings API, each with its sanitiser. */
	public static function register_settings() {
		register_setting(
			self::GROUP,
			self::API_KEY,
			array(
				'type'              => 'string',
				'sanitize_callback' => array( __CLASS__, 'sanitize_api_key' ),
				'default'           => '',
				'show_in_rest'      => false,
			)
		);
		register_setting(
			self::GROUP,
			self::HOST,
			array(
				'type'              => 'string',
				'sanitize_callback' => array( __CLASS__, 'sanitize_host' ),
				'default'           => '',
				'show_in_rest'      => false,
			)
		);
		register_setting(
			self::GROUP,
			self::TRACK_BOTS,
			array(
				'type'              => 'string',
				'sanitize_callback' => array( __CLASS__, 'sanitize_track_bots' ),
				'default'           => self::TRACK_BOTS_DEFAULT,
				'show_in_rest'      => false,
			)
		);

		add_settings_section( 'strata_analytics_main', __( 'Connection', 'strata-analytics' ), '__return_false', self::PAGE );
		add_settings_field(
			self::API_KEY,
			__( 'API key', 'strata-analytics' ),
			array( __CLASS__, 'field_api_key' ),
			self::PAGE,
			'strata_analytics_main',
			array( 'label_for' => self::API_KEY )
		);
		add_settings_field(
			self::HOST,
			__( 'Strata host URL', 'strata-analytics' ),
			array( __CLASS__, 'field_host' ),
			self::PAGE,
			'strata_analytics_main',
			array( 'label_for' => self::HOST )
		);
		add_settings_section( 'strata_analytics_capture', __( 'Capture', 'strata-analytics' ), '__return_false', self::PAGE );
		add_settings_field(
			self::TRACK_BOTS,
			__( 'Track AI bots', 'strata-analytics' ),
			array( __CLASS__, 'field_track_bots' ),
			self::PAGE,
			'strata_analytics_capture',
			array( 'label_for' => self::TRACK_BOTS )
		);
	}

	/**
	 * Keeps an API key to its character set (letters, digits, underscore)
	 * and refuses one of the wrong shape, keeping the stored key instead, so
	 * a mistyped paste never silently stops tracking. An empty key is
	 * allowed: it turns the plugin off.
	 *
	 * @param mixed $value The submitted value.
	 * @return string The key to store.
	 */
	public static function sanitize_api_key( $value ) {
		if ( ! is_string( $value ) ) {
			return self::api_key();
		}
		$key = preg_replace( '/[^0-9A-Za-z_]/', '', trim( $value ) );
		if ( '' === $key || preg_match( self::KEY_PATTERN, $key ) ) {
			return $key;
		}
		add_settings_error(
			self::API_KEY,
			'strata_analytics_bad_key',
			__( 'That is not a Strata API key (st_live_… or st_test_… and 32 letters and digits); the previous key was kept.', 'strata-analytics' )
		);
		return self::api_key();
	}

	/**
	 * Reduces a Strata URL to scheme, host, port and path, without a
	 * trailing slash (the plugin appends /sdk/v1/sdk.min.js and /e); a bare
	 * host name gets https://. Anything but an http or https URL with a host
	 * is refused, keeping the stored URL instead.
	 *
	 * @param mixed $value The submitted value.
	 * @return string The URL to store.
	 */
	public static function sanitize_host( $value ) {
		if ( ! is_string( $value ) ) {
			return self::host();
		}
		$value = trim( $value );
		if ( '' === $value ) {
			return '';
		}
		if ( false === strpos( $value, '://' ) ) {
			// A bare host name, as people often paste one.
			$value = 'https://' . $value;
		}
		$parts = wp_parse_url( $value );
		$ok    = is_array( $parts ) && isset( $parts['scheme'], $parts['host'] )
			&& in_array( strtolower( $parts['scheme'] ), array( 'http', 'https' ), true )
			&& ! isset( $parts['user'] ) && ! isset( $parts['pass'] )
			&& preg_match( '/^(\[[0-9A-Fa-f:.]+\]|[0-9A-Za-z.-]+)$/', $parts['host'] );
		if ( ! $ok ) {
			add_settings_error(
				self::HOST,
				'strata_analytics_bad_host',
				__( 'The Strata host must be an http:// or https:// URL, such as https://analytics.example.com; the previous URL was kept.', 'strata-analytics' )
			);
			return self::host();
		}
		$url = strtolower( $parts['scheme'] ) . '://' . strtolower( $parts['host'] );
		if ( isset( $parts['port'] ) ) {
			$url .= ':' . (int) $parts['port'];
		}
		if ( isset( $parts['path'] ) ) {
			$url .= rtrim( $parts['path'], '/' );
		}
		return esc_url_raw( $url, array( 'http', 'https' ) );
	}

	/**
	 * Turns the checkbox into '1' or '0'. An unticked box is not posted at
	 * all, so null (no value) is '0' here; the default applies only when the
	 * option was never stored.
	 *
	 * @param mixed $value The submitted value.
	 * @return string '1' or '0'.
	 */
	public static function sanitize_track_bots( $value ) {
		return ( true === $value || '1' === $value || 1 === $value || 'on' === $value ) ? '1' : '0';
	}

	/** The stored API key ('' when none). */
	public static function api_key() {
		$key = get_option( self::API_KEY, '' );
		return is_string( $key ) ? $key : '';
	}

	/** The stored Strata URL ('' when none), without a trailing slash. */
	public static function host() {
		$host = get_option( self::HOST, '' );
		return is_string( $host ) ? $host : '';
	}

	/** Whether AI bots are tracked; on when the option is missing. */
	public static function track_bots() {
		return '0' !== (string) get_option( self::TRACK_BOTS, self::TRACK_BOTS_DEFAULT );
	}

	/** Whether both key and URL are set, without which nothing is sent. */
	public static function configured() {
		return '' !== self::api_key() && '' !== self::host();
	}

	/** Adds Settings → Strata. */
	public static function add_page() {
		add_options_page(
			__( 'Strata Analytics', 'strata-analytics' ),
			__( 'Strata', 'strata-analytics' ),
			'manage_options',
			self::PAGE,
			array( __CLASS__, 'render_page' )
		);
	}

	/**
	 * Adds a Settings link beside Deactivate in the plugins list.
	 *
	 * @param array $links The row's links.
	 * @return array The links.
	 */
	public static function action_links( $links ) {
		$url = admin_url( 'options-general.php?page=' . self::PAGE );
		array_unshift( $links, '<a href="' . esc_url( $url ) . '">' . esc_html__( 'Settings', 'strata-analytics' ) . '</a>' );
		return $links;
	}

	/** Prints the settings page. */
	public static function render_page() {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		?>
		<div class="wrap">
			<h1><?php echo esc_html( get_admin_page_title() ); ?></h1>
			<p><?php esc_html_e( 'Sends this site\'s page views to your Strata server. Visitors are counted by Strata\'s browser script; AI bots, which run no JavaScript, are reported by this site\'s server.', 'strata-analytics' ); ?></p>
			<form action="options.php" method="post">
				<?php
				settings_fields( self::GROUP );
				do_settings_sections( self::PAGE );
				submit_button();
				?>
			</form>
		</div>
		<?php
	}

	/** Prints the API key field. */
	public static function field_api_key() {
		printf(
			'<input type="text" class="regular-text code" id="%1$s" name="%1$s" value="%2$s" autocomplete="off" spellcheck="false" placeholder="st_live_…" />',
			esc_attr( self::API_KEY ),
			esc_attr( self::api_key() )
		);
		echo '<p class="description">' . esc_html__( 'The product\'s API key, from Strata\'s dashboard (Settings → API keys).', 'strata-analytics' ) . '</p>';
	}

	/** Prints the host field. */
	public static function field_host() {
		printf(
			'<input type="url" class="regular-text code" id="%1$s" name="%1$s" value="%2$s" placeholder="https://analytics.example.com" />',
			esc_attr( self::HOST ),
			esc_attr( self::host() )
		);
		echo '<p class="description">' . esc_html__( 'The address of your Strata server. The browser script is loaded from it, and events are sent to it.', 'strata-analytics' ) . '</p>';
	}

	/** Prints the Track AI bots checkbox. */
	public static function field_track_bots() {
		printf(
			'<label><input type="checkbox" id="%1$s" name="%1$s" value="1" %2$s /> %3$s</label>',
			esc_attr( self::TRACK_BOTS ),
			checked( self::track_bots(), true, false ),
			esc_html__( 'Report page fetches by AI crawlers and assistants (GPTBot, ClaudeBot, PerplexityBot…)', 'strata-analytics' )
		);
		echo '<p class="description">' . esc_html__( 'AI bots run no JavaScript, so this site\'s server tells Strata about them, without delaying the page. Strata shows them under Acquisition → AI bots.', 'strata-analytics' ) . '</p>';
	}
}
